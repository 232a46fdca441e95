package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerRetryableAfterSuccess: seed 004: a worker reports SUCCEEDED, then its
// teardown hits a retryable error and it reports FAILED_RETRYABLE for the same
// job: a terminal job must not be resurrected.
var WorkerRetryableAfterSuccess = register(Kind{
	Name:        "WorkerRetryableAfterSuccess",
	Description: "a worker reports success, then a retryable failure for the same job",
	Timing:      AtPoint,
	Point:       sim.PointWorker,
	Effect:      sim.EffectRetryableAfterSuccess,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
})
