package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerResultPublishFails: a worker's result publish fails and the broker
// kept nothing; the worker retries it as its client would. The job must
// still end with the result, never run again for want of it.
var WorkerResultPublishFails = register(Kind{
	Name:        "WorkerResultPublishFails",
	Description: "a worker's result publish fails and the broker did not store it",
	Timing:      AtPoint,
	Point:       sim.PointPublish,
	Effect:      sim.EffectFailClean,
	Defaults:    KindOptions{Probability: 0.2},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) && !p.Heartbeat },
})
