package faults

import "github.com/dispatchsim/dispatchsim/sim"

// DispatchedWriteReplyLost: the transition to DISPATCHED is applied and its
// reply lost: the engine must find out (read back) before it publishes or not.
var DispatchedWriteReplyLost = register(Kind{
	Name:        "DispatchedWriteReplyLost",
	Description: "the transition to DISPATCHED is applied but its reply is lost",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectReplyLostAfterApply,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isTransition(p, anyState, dispatchedState) },
	hint:        "a replica's write that Observer.Command reports as a Transition into the spec's Dispatched state (Spec.Dispatched)",
})
