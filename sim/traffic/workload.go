package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
)

// Workload is what gateway clients do.
type Workload struct {
	Jobs         int           // jobs submitted (50)
	SubmitWindow time.Duration // spread over this long (2m)
	Topics       []string      // drawn uniformly (default: "default")
	StatusReads  int           // status reads by clients, spread over the fault phase
	CancelRate   float64       // share of jobs a client later cancels
	// Runs are workflow-run starts (POST /workflows/{id}/runs) spread over the
	// submit window; each uses one of RunKeys idempotency keys, so keys repeat.
	Runs    int
	RunKeys int // distinct idempotency keys (default Runs/2)
	// RunLimit is the org's max concurrent runs (default 1: seed 002's setting).
	RunLimit int
	// RunDuration is how long an admitted run lasts before it completes (30s).
	RunDuration time.Duration
	// RunOrgs and RunWorkflows spread the keys over orgs and workflows
	// (default 1 of each): workflow i belongs to org i mod RunOrgs, and key
	// k's own workflow is k mod RunWorkflows. With more than one of either,
	// the workflows are also registered for a second org (which must fail),
	// again for their own (a no-op), and with an empty org and id.
	RunOrgs, RunWorkflows int
	// RunReuse is the share of run clients that send their key with another
	// intent than the key's own: another payload, another workflow of the
	// org, or another org's workflow. Once the key has its run, they must get
	// 409 mismatch.
	RunReuse float64
	// RunInvalid are start requests the gateway must refuse before it looks
	// at the store, each sent once: no org, a body that is not a JSON object,
	// a body over the system's limit, a key over its limit, and a workflow
	// of another org (or none).
	RunInvalid int
	// RunsWithoutKey are starts with no idempotency key, each its own run:
	// its client retries after a 429 only (after a 5xx or no reply a retry
	// could start a second run).
	RunsWithoutKey int
	// RunUnlimitedOrgs are how many orgs (the last ones) have no run limit:
	// their starts are never turned away with 429.
	RunUnlimitedOrgs int
	// RunForeignKeys are keys holding values another writer left (the
	// system's sut.ForeignRunKeys), planted before the first start, each
	// started once by a client: the system must refuse them as used.
	RunForeignKeys int
	// Requires maps a topic to the capabilities its jobs require (default:
	// "gpu" jobs require "gpu").
	Requires map[string][]string
	// Tenants is how many tenants the jobs belong to ("tenant-1" to
	// "tenant-N"), drawn per job; 0: jobs carry no tenant.
	Tenants int
	// InvalidRate is the share of jobs submitted without a topic: malformed
	// requests the system must refuse, never dispatch.
	InvalidRate float64
	// Scripted plans nothing: a driver submits, reads, cancels and starts runs
	// through a sim.Driver between calls to Advance.
	Scripted bool
}

// WithDefaults is the workload with every default filled in.
func (wl Workload) WithDefaults() Workload {
	if wl.Jobs == 0 {
		wl.Jobs = 50
	}
	if wl.SubmitWindow == 0 {
		wl.SubmitWindow = 2 * time.Minute
	}
	if len(wl.Topics) == 0 {
		wl.Topics = []string{"default"}
	}
	if wl.Runs > 0 && wl.RunKeys == 0 {
		wl.RunKeys = max(wl.Runs/2, 1)
	}
	wl.RunLimit = max(wl.RunLimit, 1)
	wl.RunOrgs = max(wl.RunOrgs, 1)
	wl.RunWorkflows = max(wl.RunWorkflows, 1)
	return wl
}

// TenantName names the workload's i-th tenant (from 0).
func TenantName(i int) string { return fmt.Sprintf("tenant-%d", i+1) }

// Plan schedules the workload's clients: submits, cancels, status reads and
// run starts, drawn from the "workload" PRNG. A scripted workload plans none.
func (c *Clients) Plan() {
	wl := c.wl
	if wl.Scripted {
		return
	}
	rng := c.seeds.Child("workload")
	// Tenants and malformed requests draw from their own PRNG, so a workload
	// without them draws exactly what it drew before they existed.
	tenants := c.seeds.Child("workload-tenants")
	for i := range wl.Jobs {
		id := fmt.Sprintf("j-%d", i+1)
		at := time.Duration(rng.Int64N(int64(wl.SubmitWindow)))
		topic := wl.Topics[rng.IntN(len(wl.Topics))]
		req := sut.Job{ID: id, Topic: topic, Requires: wl.Requires[topic]}
		if wl.Requires == nil && topic == "gpu" {
			req.Requires = []string{"gpu"}
		}
		if wl.Tenants > 0 {
			req.Tenant = TenantName(tenants.IntN(wl.Tenants))
		}
		if wl.InvalidRate > 0 && tenants.Float64() < wl.InvalidRate {
			req.Topic, req.Requires = "", nil
		}
		c.pending++
		c.k.At(at, func() { c.k.Spawn("clients", "submit-"+id, func(ctx context.Context) { c.submit(ctx, i, req) }) })
		if rng.Float64() < wl.CancelRate {
			cancelAt := at + time.Duration(rng.Int64N(int64(30*time.Second)))
			c.pending++
			c.k.At(cancelAt, func() {
				c.k.Spawn("clients", "cancel-"+id, func(ctx context.Context) { c.cancel(ctx, i, id) })
			})
		}
	}
	if wl.Runs > 0 {
		c.scheduleRuns(rng)
	}
	for i := range wl.StatusReads {
		id := fmt.Sprintf("j-%d", rng.IntN(wl.Jobs)+1)
		at := time.Duration(rng.Int64N(int64(c.faultPhase)))
		client := wl.Jobs + i
		c.pending++
		c.k.At(at, func() {
			c.k.Spawn("clients", fmt.Sprintf("status-%d", i), func(ctx context.Context) { c.status(ctx, client, id) })
		})
	}
}
