package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// tenantsWorld: three tenants share the workers, about ten jobs each,
// submitted within a minute and lasting 10-40s. tenant-1 may have one job
// in flight and tenant-2 two, far fewer than their loads, so their jobs
// queue behind the cap and some reach the retry cap on it; tenant-3 has no
// cap and must never wait for one. One request in ten comes without a
// topic and must be failed as invalid, never dispatched.
var tenantsWorld = World{
	Workload: &sim.Workload{Jobs: 30, SubmitWindow: time.Minute, StatusReads: 15, CancelRate: 0.05,
		Topics: []string{"default", "default", "gpu"}, Tenants: 3, InvalidRate: 0.1},
	Workers: &sim.WorkerProfile{JobDurationMin: 10 * time.Second, JobDurationMax: 40 * time.Second},
	Options: sut.Options{TenantMaxActive: map[string]int{"tenant-1": 1, "tenant-2": 2}, MaxSchedulingRetries: 10},
}

// tenants: per-tenant caps and malformed requests under the usual faults.
var tenants = Scenario{
	Name:   "tenants",
	Source: "cordum-facts (tenant caps, invalid requests)",
	Description: "three tenants, two capped below their load and one uncapped, and requests without a topic, while " +
		"publishes fail, store reads and replies fail, replicas crash and deliveries repeat: no capped tenant's job " +
		"is dispatched while its tenant is at the cap, an uncapped tenant never waits on one, and a request without " +
		"a topic fails as invalid, never dispatched",
	Faults: []faults.Kind{faults.PublishFailsClean, faults.PublishFailsAfterStored, faults.StoreReadFails,
		faults.StoreReplyLostAfterApply, faults.ReplicaCrash, faults.DeliveryDuplicated, faults.AckLost},
	Options:   often(0.02, faults.StoreReadFails, faults.StoreReplyLostAfterApply),
	World:     tenantsWorld,
	Sometimes: []string{"dlq_invalid_request", "dlq_tenant_limit"},
	Needs:     []Feature{FeatureTenantCaps},
	Seeds:     SeedRange{First: 3400, Count: 10},
}
