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

// mappingRollout is a rolling deploy whose new replicas (2 and 3) carry a
// pool mapping the old one lacks: topic vision maps to the GPU pool only
// there. Each replica's picks and dead letters are judged with the routing
// that replica ran, never with another's.
var mappingRollout = Scenario{
	Name:   "mapping-rollout",
	Source: "placement (per-replica config)",
	Description: "a rolling deploy where replicas 2 and 3 map topic vision to the GPU pool and replica 1 does not; " +
		"replicas stop and start in turn: every pick and every no_pool_mapping failure is judged with the picking " +
		"replica's own routing",
	World: World{
		Workload: &sim.Workload{Jobs: 40, SubmitWindow: 60 * time.Second, StatusReads: 10,
			Topics: []string{"default", "gpu", "vision", "vision"}},
		ReplicaOptions: map[int]sut.Options{
			2: {Routing: visionRouting}, 3: {Routing: visionRouting},
		},
		Events: []sim.Event{
			{At: 20 * time.Second, Action: sim.EventStop, Replica: 2, For: 10 * time.Second},
			{At: 40 * time.Second, Action: sim.EventStart, Replica: 2},
			{At: 50 * time.Second, Action: sim.EventStop, Replica: 1, For: 10 * time.Second},
			{At: 75 * time.Second, Action: sim.EventStart, Replica: 1},
		},
	},
	Seeds: SeedRange{First: 3360, Count: 8},
}

// visionRouting is the world's default routing plus topic vision on the
// GPU pool.
var visionRouting = sut.Routing{
	Topics: map[string][]string{"default": {"general"}, "gpu": {"gpu-pool"}, "vision": {"gpu-pool"}},
	Pools:  map[string][]string{"general": nil, "gpu-pool": {"gpu"}},
}
