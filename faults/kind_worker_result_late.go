package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerResultLate: a worker reports long after it should, beyond the
// engine's dispatch (300s) and running (900s) timeouts by default: the result
// races the reconciler, or lands on a job already timed out or cancelled.
var WorkerResultLate = register(Kind{
	Name:        "WorkerResultLate",
	Description: "a worker reports its result after the job's timeouts",
	Timing:      AtPoint,
	Point:       sim.PointWorker,
	Effect:      sim.EffectDelay,
	Defaults:    KindOptions{Probability: 0.03, DurationMsMin: 301_000, DurationMsMax: 960_000},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
})
