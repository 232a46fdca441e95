package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerResultLateAndRetryable: two effects at one point: the result comes
// after the job's timeouts and says retryable, so a late result must not
// re-drive a job the reconciler already ended.
var WorkerResultLateAndRetryable = register(Kind{
	Name:        "WorkerResultLateAndRetryable",
	Description: "a worker reports late, after the job's timeouts, and the result is retryable",
	Timing:      AtPoint,
	Point:       sim.PointWorker,
	Effect:      sim.EffectDelay,
	Also:        []sim.Effect{sim.EffectRetryableResult},
	Defaults:    KindOptions{Probability: 0.02, DurationMsMin: 301_000, DurationMsMax: 960_000},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
})
