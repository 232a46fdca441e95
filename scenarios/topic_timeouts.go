package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// topicTimeouts gives one topic a dispatch timeout of its own, shorter than
// the global one, and another an override of zero (none), while jobs sit
// DISPATCHED past both (a failed RUNNING write leaves a running job
// DISPATCHED) and results come late: the reconciler must time each job out
// no sooner than its own topic's timeout, and no later than it plus a tick.
var topicTimeouts = Scenario{
	Name:   "topic-timeouts",
	Source: "reconciler (Cordum's per-topic dispatch timeout)",
	Description: "topic fast has a 20s dispatch timeout, plain an override of zero, default the global 60s; RUNNING " +
		"writes fail and results come late, so the reconciler meets jobs of each topic on either side of their timeout",
	Faults:  []faults.Kind{faults.RunningWriteFails, faults.WorkerResultLate},
	Options: often(0.3, faults.RunningWriteFails, faults.WorkerResultLate),
	World: World{
		Workload: &sim.Workload{Jobs: 30, StatusReads: 10, Topics: []string{"default", "fast", "plain"}},
		Workers:  &sim.WorkerProfile{JobDurationMin: time.Second, JobDurationMax: 45 * time.Second},
		Options: sut.Options{DispatchTimeout: 60 * time.Second, RunningTimeout: 2 * time.Minute, ReconcileInterval: 5 * time.Second,
			DispatchTimeoutByTopic: map[string]time.Duration{"fast": 20 * time.Second, "plain": 0},
			Routing: sut.Routing{Topics: map[string][]string{"default": {"general"}, "fast": {"general"}, "plain": {"general"}},
				Pools: map[string][]string{"general": nil}}},
	},
	// The faults are the workers' and the RUNNING writes': none holds up the
	// reconciler, so its upper bound holds while they fire too.
	Spec:  checker.Spec{Timely: true},
	Seeds: SeedRange{First: 7100, Count: 6},
}
