package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
)

// workerOutcomes: workers report every outcome a job can have, not only
// success, while the store's writes fail now and then, result writes among
// them.
var workerOutcomes = Scenario{
	Name:   "worker-outcomes",
	Source: "seed 004, DESIGN §5",
	Description: "workers report fatal and retryable failures as well as successes while store writes fail before " +
		"or after they apply: a FAILED job carries its worker's report and a DLQ entry announced once stored, a " +
		"retryable failure earns one re-dispatch, and a result whose write failed is retried, never dropped",
	Faults:  []faults.Kind{faults.StoreWriteFailsBeforeApply, faults.StoreReplyLostAfterApply, faults.WorkerResultDuplicated},
	Options: often(0.03, faults.StoreWriteFailsBeforeApply, faults.StoreReplyLostAfterApply),
	World: World{
		Workload: &sim.Workload{Jobs: 30, StatusReads: 20, CancelRate: 0.05},
		Workers:  &sim.WorkerProfile{FailRate: 0.25, RetryableRate: 0.25},
	},
	Seeds: SeedRange{First: 4500, Count: 8},
}

// cancels: clients cancel many jobs, at every point of their lives, while the
// cancels' own writes fail or lose their replies: a cancel is settled only
// once the job is terminal, so one that failed is retried rather than lost.
var cancels = Scenario{
	Name:   "cancels",
	Source: "DESIGN §5 (the cancel API)",
	Description: "40% of jobs are cancelled 0-30s after their submit, while cancel writes fail before they apply " +
		"and store replies are lost: every cancel is acked only once its job is terminal",
	Faults:  []faults.Kind{faults.CancelWriteFails, faults.StoreReplyLostAfterApply},
	Options: often(0.03, faults.StoreReplyLostAfterApply),
	World: World{
		Workload: &sim.Workload{Jobs: 30, StatusReads: 20, CancelRate: 0.4},
		Workers:  &sim.WorkerProfile{JobDurationMin: time.Second, JobDurationMax: 30 * time.Second},
	},
	Seeds: SeedRange{First: 4600, Count: 8},
}
