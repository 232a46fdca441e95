package scenarios

import (
	"github.com/dispatchsim/dispatchsim/faults"
)

// submitRetries holds a system to the submit de-duplication window its spec
// promises (sut.Spec.SubmitDedupWindow, checker submit_dedup): a client
// whose reply was lost after the submit landed sends it again, and clients
// send landed submits again seconds to minutes later, often after the job
// has ended, as a job runner re-driving requests it never saw answered
// does. A de-duplication key that expires early, or one a terminal job no
// longer holds, makes the job a second time.
var submitRetries = Scenario{
	Name:   "submit-retries",
	Source: "DESIGN §4 (field)",
	Description: "submits whose reply is lost are retried, and landed submits are sent again seconds to minutes " +
		"later inside the spec's submit de-duplication window: no job may be made twice",
	Faults: []faults.Kind{faults.SubmitReplyLost, faults.SubmitRetriedLate, faults.DeliveryDuplicated},
	Options: func(o faults.Options) faults.Options {
		return often(0.3, faults.SubmitReplyLost, faults.SubmitRetriedLate)(o)
	},
	Seeds: SeedRange{First: 9300, Count: 8},
}
