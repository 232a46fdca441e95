package faults

import "github.com/dispatchsim/dispatchsim/sim"

// RollbackWriteFails: after a failed publish, the engine's rollback
// DISPATCHED -> SCHEDULED fails before it is applied: the job stays DISPATCHED
// with nothing published (the rollback-failure branch of the dispatch runbook).
var RollbackWriteFails = register(Kind{
	Name:        "RollbackWriteFails",
	Description: "the publish rollback DISPATCHED -> SCHEDULED fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.3},
	needs:       needRollback,
	applies:     func(p *sim.Point) bool { return isTransition(p, dispatchedState, scheduledState) },
	hint:        "a replica's write that Observer.Command reports as a Transition from Spec.Dispatched back to Spec.Scheduled (a rollback after a failed publish)",
})
