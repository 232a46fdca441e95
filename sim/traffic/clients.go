package traffic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/store"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Clients are a world's gateway clients: the ones its workload plans and the
// ones a driver starts. Each client is an actor of the "clients" group that
// calls the system's gateway once (retrying as a real client would) and
// records the operation, with its call and return times, for the
// linearizability checks.
type Clients struct {
	k          *kernel.Kernel
	host       kernel.Host
	hist       *history.History
	obs        sut.Observer
	seeds      kernel.SeedTree
	store      *store.Store
	wl         Workload
	faultPhase time.Duration
	gateway    sut.Gateway
	admit      sut.Admission // nil when the system has no run admission
	// foreign plants other writers' values under keys (nil: the system
	// names none).
	foreign sut.ForeignRunKeys
	// limits are the system's bounds on a run start (invalid requests).
	limits sut.RunRequestLimits
	// dedupWindow is how long after a submit the system promises a retry
	// of it makes no second job: a late retry comes inside it.
	dedupWindow time.Duration

	// pending counts clients not done yet: the heal phase waits for them.
	pending     int
	runsStarted bool
	// scripted numbers the clients a driver starts.
	scripted int
}

// New returns the clients of a world whose gateway is gw. wl has its
// defaults filled in; status reads spread over faultPhase.
func New(env kernel.Env, s *store.Store, gw sut.Gateway, wl Workload, faultPhase time.Duration) *Clients {
	c := &Clients{k: env.Kernel, host: env.Host, hist: env.History, obs: env.Observer, seeds: env.Seeds, store: s, wl: wl,
		faultPhase: faultPhase, gateway: gw}
	c.admit, _ = gw.(sut.Admission)
	c.foreign, _ = gw.(sut.ForeignRunKeys)
	return c
}

// HoldTo tells the clients the run start limits the system promises, so
// the invalid requests they send go just past them.
func (c *Clients) HoldTo(limits sut.RunRequestLimits) { c.limits = limits }

// RetryWithin tells the clients the submit de-duplication window the
// system promises (sut.Spec.SubmitDedupWindow): a client that sends a landed
// submit again late does so inside it.
func (c *Clients) RetryWithin(window time.Duration) { c.dedupWindow = window }

// Pending counts the clients that have not finished.
func (c *Clients) Pending() int { return c.pending }

// Clients a driver starts (a property-based test, between calls to Advance)
// act at the current virtual time, on the kernel's schedule.

// nextClient numbers a driver's client after every planned one.
func (c *Clients) nextClient() int {
	wl := c.wl
	c.scripted++
	return wl.Jobs + wl.StatusReads + wl.Runs + wl.RunInvalid + wl.RunsWithoutKey + wl.RunForeignKeys + c.scripted
}

// Submit has a new client submit a job on topic now; it returns the job id.
func (c *Clients) Submit(topic string) string {
	client := c.nextClient()
	id := fmt.Sprintf("x-%d", client)
	req := sut.Job{ID: id, Topic: topic}
	if topic == "gpu" {
		req.Requires = []string{"gpu"}
	}
	c.pending++
	c.k.Spawn("clients", "submit-"+id, func(ctx context.Context) { c.submit(ctx, client, req) })
	return id
}

// ReadStatus has a new client read a job's state now.
func (c *Clients) ReadStatus(jobID string) {
	client := c.nextClient()
	c.pending++
	c.k.Spawn("clients", fmt.Sprintf("status-%d", client), func(ctx context.Context) { c.status(ctx, client, jobID) })
}

// Cancel has a new client cancel a job now.
func (c *Clients) Cancel(jobID string) {
	client := c.nextClient()
	c.pending++
	c.k.Spawn("clients", fmt.Sprintf("cancel-%d", client), func(ctx context.Context) { c.cancel(ctx, client, jobID) })
}

// StartRun has a new client start a workflow run with an idempotency key now,
// retrying as the planned run clients do. The first call registers the
// workflow and starts the workflow engine and the sweeper.
func (c *Clients) StartRun(key string) {
	if c.admit == nil {
		return // the system has no run admission
	}
	c.bootAdmission()
	client := c.nextClient()
	rng := c.seeds.Child(fmt.Sprintf("run-client-%d", client))
	c.pending++
	c.k.Spawn("clients", fmt.Sprintf("start-run-%d", client), func(ctx context.Context) {
		c.startRun(ctx, client, client, key, runIntent{org: runOrg(0), workflow: runWorkflow(0),
			payload: []byte(`{"input":"` + key + `"}`)}, rng)
	})
}

// submit publishes a job request, retrying a refused publish a few times as a
// gateway would.
func (c *Clients) submit(ctx context.Context, client int, req sut.Job) {
	defer func() { c.pending-- }()
	k := c.k
	a := kernel.ActorOf(ctx)
	op := history.ClientOp{Client: client, Kind: history.OpSubmit, Key: req.ID, Input: req.Topic, Call: k.Now(), CallStep: k.Step()}
	job := history.SubmittedJob{JobID: req.ID, Topic: req.Topic, Tenant: req.Tenant, At: k.Now(), Requires: req.Requires}
	var err error
	var late time.Duration // a landed submit sent again this much later
	for try := 0; try < 5; try++ {
		job.Attempts = append(job.Attempts, k.Now())
		if err = c.gateway.Submit(ctx, req); err == nil {
			if err = c.reply(a, req.ID, &late); err == nil {
				break
			}
		}
		a.SleepUntil(k.Now() + time.Second)
	}
	if late > 0 {
		// The client's second thought: the same request, as it sent it,
		// inside the window the system promises to de-duplicate it in.
		a.SleepUntil(k.Now() + min(late, c.dedupWindow))
		for try := 0; try < 5; try++ {
			job.Attempts = append(job.Attempts, k.Now())
			if c.gateway.Submit(ctx, req) == nil {
				break
			}
			a.SleepUntil(k.Now() + time.Second)
		}
	}
	// Accepted when the broker stored any of the attempts (an ambiguous failure
	// stores it too), or, for a gateway that writes the job to the store
	// itself, when one of the attempts committed a state of the job: the
	// ground truth, not the client's view.
	for _, p := range c.hist.Publishes {
		if p.Actor == a.Name() && p.JobID == req.ID && p.Stored() {
			job.Accepted = true
		}
	}
	for _, s := range c.hist.States {
		if s.Actor == a.Name() && s.JobID == req.ID {
			job.Accepted = true
		}
	}
	op.Return, op.RetStep = k.Now(), k.Step()
	op.Output = "ok"
	if err != nil {
		op.Output, op.Unknown = "error", true
	}
	if job.Accepted {
		c.store.ExpectJob(req.ID)
	}
	c.hist.Ops = append(c.hist.Ops, op)
	c.hist.Submitted = append(c.hist.Submitted, job)
}

// errReplyLost is what a client sees of a submit the gateway applied whose
// reply never reached it.
var errReplyLost = errors.New("the gateway's reply was lost")

// reply is the fault point between a submit the gateway applied and its
// reply reaching the client: the reply may be lost (the client sees an error
// and retries), and the client may decide to send the request again later
// (late is set).
func (c *Clients) reply(a *kernel.Actor, jobID string, late *time.Duration) error {
	p := &kernel.Point{Kind: history.PointClient, Actor: a.Name(), Group: "clients", JobID: jobID}
	f, fired := c.host.Fault(p)
	if !fired {
		return nil
	}
	c.host.RecordFault(a, p, f, jobID)
	var err error
	for _, effect := range f.Effects() {
		switch effect {
		case history.EffectReplyLostAfterApply:
			err = errReplyLost
		case history.EffectDelay:
			if c.dedupWindow > 0 {
				*late = f.Duration
			}
		}
	}
	return err
}

func (c *Clients) cancel(ctx context.Context, client int, jobID string) {
	defer func() { c.pending-- }()
	op := history.ClientOp{Client: client, Kind: history.OpCancel, Key: jobID, Call: c.k.Now(), CallStep: c.k.Step()}
	err := c.gateway.Cancel(ctx, jobID)
	op.Return, op.RetStep, op.Output = c.k.Now(), c.k.Step(), "ok"
	if err != nil {
		op.Output, op.Unknown = "error", true
	}
	c.hist.Ops = append(c.hist.Ops, op)
}

func (c *Clients) status(ctx context.Context, client int, jobID string) {
	defer func() { c.pending-- }()
	op := history.ClientOp{Client: client, Kind: history.OpStatus, Key: jobID, Call: c.k.Now(), CallStep: c.k.Step()}
	st, err := c.gateway.Status(ctx, jobID)
	op.Return, op.RetStep = c.k.Now(), c.k.Step()
	switch {
	case err == nil:
		op.Output = st
	case errors.Is(err, sut.ErrNotFound):
		op.Output = ""
	default:
		op.Output, op.Unknown = "error", true
	}
	c.hist.Ops = append(c.hist.Ops, op)
}
