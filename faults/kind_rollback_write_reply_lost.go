package faults

import "github.com/dispatchsim/dispatchsim/sim"

// RollbackWriteReplyLost: the publish rollback DISPATCHED -> SCHEDULED is
// applied but its reply lost: the engine believes the rollback failed.
var RollbackWriteReplyLost = register(Kind{
	Name:        "RollbackWriteReplyLost",
	Description: "the publish rollback DISPATCHED -> SCHEDULED is applied but its reply is lost",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectReplyLostAfterApply,
	Defaults:    KindOptions{Probability: 0.3},
	needs:       needRollback,
	applies:     func(p *sim.Point) bool { return isTransition(p, dispatchedState, scheduledState) },
	hint:        "a replica's write that Observer.Command reports as a Transition from Spec.Dispatched back to Spec.Scheduled (a rollback after a failed publish)",
})
