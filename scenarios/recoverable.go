package scenarios

import (
	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
)

// recoverable: only faults the engine recovers from without giving a job
// up, so every job must succeed.
//
// A clean publish failure is rolled back and re-published inside the
// broker's window; a DISPATCHED write that failed is retried, one whose
// reply was lost is confirmed by reading the job back; a failed RUNNING
// write leaves the job DISPATCHED and published, which its result ends;
// duplicate deliveries meet the redelivery gate. A publish whose retry
// comes after the engine's re-publish window parks its job (the price of
// not knowing whether a copy was stored): so no acks are lost (a lost NAK
// waits out the ack wait), and publishes fail rarely enough that no job
// fails five in a row.
var recoverable = Scenario{
	Name:   "recoverable",
	Source: "seed 000, DESIGN §4",
	Description: "publishes fail cleanly, DISPATCHED writes fail or lose their reply, RUNNING writes fail and " +
		"deliveries repeat: faults the engine recovers from on its own, so every job must succeed",
	Faults: []faults.Kind{faults.PublishFailsClean, faults.DispatchedWriteFails, faults.DispatchedWriteReplyLost,
		faults.RunningWriteFails, faults.DeliveryDuplicated},
	Options: func(o faults.Options) faults.Options {
		o = often(0.1, faults.PublishFailsClean)(o)
		return often(0.15, faults.DispatchedWriteFails, faults.DispatchedWriteReplyLost, faults.RunningWriteFails)(o)
	},
	Spec:  checker.Spec{AllSucceed: true},
	Seeds: SeedRange{First: 1100, Count: 8},
}
