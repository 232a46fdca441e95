package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// workflowOrg and workflowID name the one workflow the run clients start.
const (
	workflowOrg = "org-1"
	workflowID  = "wf-1"
)

// Run clients: how long one waits for a reply (history.RunRequestTimeout), how
// often it looks, and how many times it tries a key before it gives up.
const (
	runReplyPoll = 250 * time.Millisecond
	runMaxTries  = 120
	// runCompleterTick is how often the workflow engine looks for runs that are due.
	runCompleterTick = 5 * time.Second
)

// scheduleRuns plans workflow-run starts. Clients reuse idempotency keys and
// retry a key after a 429, a 409 in flight, a 5xx or no reply at all. The
// workflow engine completes every created run RunDuration after it began (who
// asked for it does not matter: a run whose reply was lost still runs), and a
// sweeper reclaims stale reservations.
func (c *Clients) scheduleRuns(rng *rand.Rand) {
	wl := c.wl
	keys := wl.RunKeys // filled in by WithDefaults
	if c.admit == nil {
		return // the system has no run admission
	}
	c.bootAdmission()
	for i := range wl.Runs {
		key := fmt.Sprintf("key-%d", rng.IntN(keys)+1)
		at := time.Second + time.Duration(rng.Int64N(int64(wl.SubmitWindow)))
		client := wl.Jobs + wl.StatusReads + i
		crng := c.seeds.Child(fmt.Sprintf("run-client-%d", i))
		c.pending++
		c.k.At(at, func() {
			c.k.Spawn("clients", fmt.Sprintf("start-run-%d", i), func(ctx context.Context) {
				c.startRun(ctx, client, i, key, crng)
			})
		})
	}
}

// bootAdmission registers the workflow and starts the workflow engine and the
// reservation sweeper, once.
func (c *Clients) bootAdmission() {
	if c.runsStarted {
		return
	}
	c.runsStarted = true
	c.pending++
	c.k.Spawn("clients", "register-workflow", func(ctx context.Context) {
		defer func() { c.pending-- }()
		_ = c.admit.RegisterWorkflow(ctx, workflowOrg, workflowID)
	})
	c.k.Spawn("workflow-engine", "run-completer", c.completeDueRuns)
	c.k.Spawn("sweeper", "reservation-sweeper", c.sweepReservations)
}

// startRun is one client starting a run with an idempotency key, retrying as a
// client that holds a key may: the same key and payload each time.
func (c *Clients) startRun(ctx context.Context, client, i int, key string, rng *rand.Rand) {
	defer func() { c.pending-- }()
	a := kernel.ActorOf(ctx)
	payload := []byte(`{"input":"` + key + `"}`)
	for try := range runMaxTries {
		op := history.ClientOp{Client: client, Kind: history.OpStartRun, Key: key, Input: string(payload), Call: c.k.Now(), CallStep: c.k.Step()}
		res, answered := c.requestRun(a, fmt.Sprintf("run-%d-%d", i, try), key, payload)
		op.Return, op.RetStep = c.k.Now(), c.k.Step()
		op.Status, op.Output = res.Status, runReplyOutput(res)
		// A 5xx or no reply may hide an applied reservation or run: unknown.
		op.Unknown = !answered || res.Status >= 500
		c.hist.Ops = append(c.hist.Ops, op)
		if answered && !retryableRunReply(res) {
			return
		}
		a.SleepUntil(c.k.Now() + 5*time.Second + time.Duration(rng.Int64N(int64(10*time.Second))))
	}
}

// requestRun sends one start request to the gateway, which serves it on its
// own actor: a gateway crash kills the request, and the client sees no reply.
func (c *Clients) requestRun(a *kernel.Actor, name, key string, payload []byte) (sut.RunReply, bool) {
	var res sut.RunReply
	done := false
	c.k.Spawn("gateway", name, func(ctx context.Context) {
		res = c.admit.StartRun(ctx, workflowOrg, workflowID, key, payload)
		done = true
	})
	deadline := c.k.Now() + history.RunRequestTimeout
	for !done && c.k.Now() < deadline {
		a.SleepUntil(min(c.k.Now()+runReplyPoll, deadline))
	}
	if !done {
		c.k.Tracef(a.Name(), "start run %s: no reply", key)
	}
	return res, done
}

// runReplyOutput is what the client keeps of a reply: the run id of a 200, the
// reason of a 409.
func runReplyOutput(res sut.RunReply) string {
	if res.Status == 200 {
		return res.RunID
	}
	return res.Conflict
}

// retryableRunReply: a 429 (capacity may free), a 409 in flight (the holder may
// finish or go stale) and any 5xx are worth another try with the same key.
func retryableRunReply(res sut.RunReply) bool {
	return res.Status == 429 || res.Status >= 500 || res.Conflict == sut.RunInFlight
}

// completeDueRuns is the workflow engine: every run completes RunDuration after
// it was created. It knows its own runs, so it reads the active set straight
// from the store's memory; the completion itself goes through admission.
func (c *Clients) completeDueRuns(ctx context.Context) {
	a := kernel.ActorOf(ctx)
	d := max(c.wl.RunDuration, 30*time.Second)
	for {
		a.SleepUntil(c.k.Now() + runCompleterTick)
		for _, runID := range c.obs.DueRuns(c.store, workflowOrg, kernel.Epoch.Add(c.k.Now()), d) {
			if err := c.admit.CompleteRun(ctx, workflowOrg, runID); err != nil {
				c.k.Tracef(a.Name(), "complete run %s: %v", runID, err)
			}
		}
	}
}

// sweepReservations runs the gateway's sweeper of stale reservations.
func (c *Clients) sweepReservations(ctx context.Context) {
	a := kernel.ActorOf(ctx)
	for {
		a.SleepUntil(c.k.Now() + c.admit.StaleReservationAfter())
		if n, err := c.admit.SweepStaleReservations(ctx); n > 0 || err != nil {
			c.k.Tracef(a.Name(), "swept %d stale reservations, err=%v", n, err)
		}
	}
}

// Admission reads the run admission state (idempotency keys, reservations
// and runs) through the observer.
func (c *Clients) Admission() history.AdmissionSnapshot {
	snap := c.obs.Admission(c.store, kernel.Epoch)
	if c.admit != nil {
		snap.StaleAfter = c.admit.StaleReservationAfter()
	}
	return snap
}
