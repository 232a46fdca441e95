package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerResultDuplicated: a worker reports its result twice.
var WorkerResultDuplicated = register(Kind{
	Name:        "WorkerResultDuplicated",
	Description: "a worker reports the same result twice",
	Timing:      AtPoint,
	Point:       sim.PointWorker,
	Effect:      sim.EffectDuplicateResult,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
})
