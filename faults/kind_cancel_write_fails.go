package faults

import "github.com/dispatchsim/dispatchsim/sim"

// CancelWriteFails: a replica's write of a client's cancel fails before it is
// applied. The cancel must be retried, never acked as done: nothing else
// brings it back.
var CancelWriteFails = register(Kind{
	Name:        "CancelWriteFails",
	Description: "the transition to CANCELLED fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.3},
	applies:     func(p *sim.Point) bool { return isTransition(p, anyState, cancelledState) },
	hint:        "a replica's write that Observer.Command reports as a Transition into Spec.Cancelled; Spec.Cancels says whether replicas write cancels at all",
	needs:       needReplicaCancels,
})
