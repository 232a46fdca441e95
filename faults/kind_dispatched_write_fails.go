package faults

import "github.com/dispatchsim/dispatchsim/sim"

// DispatchedWriteFails: the engine's transition SCHEDULED -> DISPATCHED fails
// before it is applied: nothing may be published for it.
var DispatchedWriteFails = register(Kind{
	Name:        "DispatchedWriteFails",
	Description: "the transition to DISPATCHED fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isTransition(p, anyState, dispatchedState) },
	hint:        "a replica's write that Observer.Command reports as a Transition into the spec's Dispatched state (Spec.Dispatched)",
})
