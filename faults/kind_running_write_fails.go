package faults

import "github.com/dispatchsim/dispatchsim/sim"

// RunningWriteFails: the engine's DISPATCHED -> RUNNING write after a
// successful publish fails: the job stays DISPATCHED, and the worker's result or
// the reconciler must resolve it.
var RunningWriteFails = register(Kind{
	Name:        "RunningWriteFails",
	Description: "the transition DISPATCHED -> RUNNING after publish fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isTransition(p, dispatchedState, runningState) },
	hint:        "a replica's write that Observer.Command reports as a Transition from Spec.Dispatched into Spec.Running",
	needs:       needRunning,
})
