package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerRetryableWindow: for a window of the fault phase every worker answers
// a retryable failure (a dependency the jobs need is down): each job that
// runs then is retried, so the retry path, its backoff and the cap are hit
// in a burst rather than one job at a time.
var WorkerRetryableWindow = register(Kind{
	Name:        "WorkerRetryableWindow",
	Description: "workers answer retryable failures for a window of time",
	Timing:      Window,
	Point:       sim.PointWorker,
	Effect:      sim.EffectRetryableResult,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 10_000, DurationMsMax: 90_000},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
})
