package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
)

// longJobs runs jobs for longer than the replayer waits before it re-drives
// a job it finds untouched: whatever the engine leaves in a re-drivable state
// while a worker runs it is dispatched a second time, and with no
// de-duplication at the broker or the worker, runs a second time.
var longJobs = Scenario{
	Name:   "long-jobs",
	Source: "seed 000, DESIGN §4",
	Description: "jobs run 70-150s, past the replayer's 60s, while DISPATCHED and RUNNING writes fail; no " +
		"de-duplication at the broker or the worker, so a job published in a state the replayer re-drives runs " +
		"twice; every job must succeed once",
	Faults:  []faults.Kind{faults.DispatchedWriteFails, faults.DispatchedWriteReplyLost, faults.RunningWriteFails},
	Options: often(0.2, faults.DispatchedWriteFails, faults.DispatchedWriteReplyLost, faults.RunningWriteFails),
	World: World{
		NoBrokerDedup: true, NoWorkerDedup: true,
		Workload: &sim.Workload{Jobs: 25, StatusReads: 10},
		Workers:  &sim.WorkerProfile{JobDurationMin: 70 * time.Second, JobDurationMax: 150 * time.Second},
	},
	Spec:  checker.Spec{AllSucceed: true},
	Seeds: SeedRange{First: 1200, Count: 6},
}
