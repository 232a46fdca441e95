package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerCrashMidJob: a worker crashes after running a job, before it reports
// the result; it restarts after sim.WorkerProfile.RestartAfter.
var WorkerCrashMidJob = register(Kind{
	Name:        "WorkerCrashMidJob",
	Description: "a worker crashes mid-job without reporting, and restarts later",
	Timing:      AtPoint,
	Point:       sim.PointWorker,
	Effect:      sim.EffectCrash,
	Defaults:    KindOptions{Probability: 0.03},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
	class:       classWorkerCrash,
})
