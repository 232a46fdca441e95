package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// placementWorld has workers the least-loaded pick must pass over, prefer
// or always be able to use: in the general pool, one worker with no
// parallel limit and little load, one whose GPU and one whose CPU sit at
// the overload threshold in every heartbeat; in the GPU pool, one worker
// whose GPU is low but whose ten slots fill up (it reaches exactly 90% of
// them), and one with no parallel limit whose GPU is high. Every job can be
// placed at once, so a low retry cap fails only a job the pick wrongly
// refused.
var placementWorld = World{
	WorkerSpecs: []sim.WorkerSpec{
		{ID: "free", Pool: "general", CPU: 10},
		{ID: "hot-gpu", Pool: "general", MaxParallel: 8, CPU: 10, GPU: 90},
		{ID: "hot-cpu", Pool: "general", MaxParallel: 8, CPU: 90},
		{ID: "g-low", Pool: "gpu-pool", MaxParallel: 10, GPU: 20},
		{ID: "g-high", Pool: "gpu-pool", GPU: 60},
	},
	Workload: &sim.Workload{Jobs: 40, SubmitWindow: 40 * time.Second, StatusReads: 10,
		Topics: []string{"default", "gpu", "gpu", "gpu"}},
	Workers: &sim.WorkerProfile{JobDurationMin: 20 * time.Second, JobDurationMax: 60 * time.Second},
	Options: sut.Options{MaxSchedulingRetries: 5},
}

// placement: no faults, only the pick among workers of every kind of load.
var placement = Scenario{
	Name:   "placement",
	Source: "cordum-facts (least-loaded pick)",
	Description: "workers at the CPU and GPU overload thresholds, workers without a parallel limit, and a pool " +
		"the default topic does not map to: every job must run on a worker of an eligible pool that can take it, " +
		"and since one always can, every job must succeed",
	World: placementWorld,
	Spec:  checker.Spec{AllSucceed: true, Timely: true},
	Seeds: SeedRange{First: 3300, Count: 6},
}
