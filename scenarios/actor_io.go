package scenarios

import (
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
)

// actorIO aims at the I/O of the actors around the dispatcher rather than
// its replicas': a worker's own store commands (the dispatch gate of a
// store-backed consumer: a read that fails, a claim whose reply is lost),
// its result publishes, and the gateway's status reads. Each must fail
// closed: a dispatch the gate cannot check is not run, a result is retried
// until it lands, a status read that failed says so.
var actorIO = Scenario{
	Name:   "actor-io",
	Source: "fault points",
	Description: "workers' store commands fail or lose their replies, their result publishes fail, and the gateway's " +
		"status reads fail, under redelivery: no dispatch runs twice or not at all for it, no client reads a state " +
		"the job is not in",
	Faults: []faults.Kind{faults.WorkerStoreFails, faults.WorkerStoreReplyLost, faults.WorkerResultPublishFails,
		faults.StatusReadFails, faults.DeliveryDuplicated},
	World: World{Workload: &sim.Workload{Jobs: 30, StatusReads: 60}},
	Seeds: SeedRange{First: 8600, Count: 8},
}
