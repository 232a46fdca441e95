package traffic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Run clients: how long one waits for a reply (history.RunRequestTimeout), how
// often it looks, and how many times it tries a key before it gives up.
const (
	runReplyPoll = 250 * time.Millisecond
	runMaxTries  = 120
	// runCompleterTick is how often the workflow engine looks for runs that are due.
	runCompleterTick = 5 * time.Second
	// registerMaxTries bounds the retries of what the run clients set up
	// (a registration, an org's limit, another writer's value) after an error.
	registerMaxTries = 30
	// opInputMax is how much of a request body an operation keeps.
	opInputMax = 256
)

// runOrg and runWorkflow name org i and workflow i (0-based): org-1, wf-1, ...
func runOrg(i int) string      { return fmt.Sprintf("org-%d", i+1) }
func runWorkflow(i int) string { return fmt.Sprintf("wf-%d", i+1) }

// runIntent is what a start asks for: a workflow of an org, with a body.
type runIntent struct {
	org, workflow string
	payload       []byte
}

// workflowOrg is the org workflow w belongs to.
func (wl Workload) workflowOrg(w int) int { return w % wl.RunOrgs }

// keyIntent is key k's own intent (1-based k): its workflow and the body
// every client of the key sends unless it reuses the key for another intent.
func (wl Workload) keyIntent(k int) runIntent {
	w := (k - 1) % wl.RunWorkflows
	key := fmt.Sprintf("key-%d", k)
	return runIntent{org: runOrg(wl.workflowOrg(w)), workflow: runWorkflow(w),
		payload: []byte(`{"input":"` + key + `","priority":` + strconv.Itoa(1+k%3) + `}`)}
}

// reuseIntent is key k's intent changed in one respect drawn from rng: the
// body, the workflow (another of the org's) or the org (one of another
// org's workflows), among those the workload has.
func (wl Workload) reuseIntent(k, client int, rng *rand.Rand) runIntent {
	in := wl.keyIntent(k)
	w := (k - 1) % wl.RunWorkflows
	org := wl.workflowOrg(w)
	var sameOrg, otherOrg []int
	for x := range wl.RunWorkflows {
		switch {
		case x == w:
		case wl.workflowOrg(x) == org:
			sameOrg = append(sameOrg, x)
		default:
			otherOrg = append(otherOrg, x)
		}
	}
	choices := []string{"payload"}
	if len(sameOrg) > 0 {
		choices = append(choices, "workflow")
	}
	if len(otherOrg) > 0 {
		choices = append(choices, "org")
	}
	switch choices[rng.IntN(len(choices))] {
	case "workflow":
		in.workflow = runWorkflow(sameOrg[rng.IntN(len(sameOrg))])
	case "org":
		x := otherOrg[rng.IntN(len(otherOrg))]
		in.org, in.workflow = runOrg(wl.workflowOrg(x)), runWorkflow(x)
	default:
		in.payload = []byte(fmt.Sprintf(`{"input":"key-%d","priority":%d,"variant":%d}`, k, 1+k%3, client))
	}
	return in
}

// scheduleRuns plans workflow-run starts. Clients reuse idempotency keys and
// retry a key after a 429, a 409 in flight, a 5xx or no reply at all; some
// reuse a key for another intent. The workflow engine completes every
// created run RunDuration after it began (who asked for it does not matter:
// a run whose reply was lost still runs), and a sweeper reclaims stale
// reservations. Invalid requests are sent once each.
func (c *Clients) scheduleRuns(rng *rand.Rand) {
	wl := c.wl
	keys := wl.RunKeys // filled in by WithDefaults
	if c.admit == nil {
		return // the system has no run admission
	}
	c.bootAdmission()
	// Intents come from their own PRNG, so the workload's draws stay put.
	irng := c.seeds.Child("run-intents")
	for i := range wl.Runs {
		k := rng.IntN(keys) + 1
		key := fmt.Sprintf("key-%d", k)
		at := time.Second + time.Duration(rng.Int64N(int64(wl.SubmitWindow)))
		client := wl.Jobs + wl.StatusReads + i
		in := wl.keyIntent(k)
		if wl.RunReuse > 0 && irng.Float64() < wl.RunReuse {
			in = wl.reuseIntent(k, client, irng)
		}
		crng := c.seeds.Child(fmt.Sprintf("run-client-%d", i))
		c.pending++
		c.k.At(at, func() {
			c.k.Spawn("clients", fmt.Sprintf("start-run-%d", i), func(ctx context.Context) {
				c.startRun(ctx, client, i, key, in, crng)
			})
		})
	}
	c.scheduleInvalidRuns()
	c.scheduleUnkeyedRuns()
	c.scheduleForeignKeyRuns()
}

// scheduleUnkeyedRuns plans the starts without an idempotency key, over the
// workflows in turn, at times drawn from their own PRNG.
func (c *Clients) scheduleUnkeyedRuns() {
	wl := c.wl
	rng := c.seeds.Child("run-unkeyed")
	for i := range wl.RunsWithoutKey {
		at := time.Second + time.Duration(rng.Int64N(int64(wl.SubmitWindow)))
		client := wl.Jobs + wl.StatusReads + wl.Runs + wl.RunInvalid + i
		w := i % wl.RunWorkflows
		in := runIntent{org: runOrg(wl.workflowOrg(w)), workflow: runWorkflow(w),
			payload: []byte(fmt.Sprintf(`{"input":"unkeyed-%d"}`, i+1))}
		crng := c.seeds.Child(fmt.Sprintf("unkeyed-run-client-%d", i))
		c.pending++
		c.k.At(at, func() {
			c.k.Spawn("clients", fmt.Sprintf("start-unkeyed-run-%d", i), func(ctx context.Context) {
				c.startRun(ctx, client, i, "", in, crng)
			})
		})
	}
}

// scheduleForeignKeyRuns plans one start for each key holding another
// writer's value (planted at boot), at times drawn from their own PRNG.
func (c *Clients) scheduleForeignKeyRuns() {
	wl := c.wl
	if c.foreign == nil {
		return
	}
	rng := c.seeds.Child("run-foreign")
	for i := range wl.RunForeignKeys {
		at := time.Second + time.Duration(rng.Int64N(int64(wl.SubmitWindow)))
		client := wl.Jobs + wl.StatusReads + wl.Runs + wl.RunInvalid + wl.RunsWithoutKey + i
		key := foreignKey(i)
		in := runIntent{org: runOrg(0), workflow: runWorkflow(0), payload: []byte(`{"input":"` + key + `"}`)}
		crng := c.seeds.Child(fmt.Sprintf("foreign-run-client-%d", i))
		c.pending++
		c.k.At(at, func() {
			c.k.Spawn("clients", fmt.Sprintf("start-foreign-run-%d", i), func(ctx context.Context) {
				c.startRun(ctx, client, i, key, in, crng)
			})
		})
	}
}

// foreignKey names the i-th key another writer's value is planted under.
func foreignKey(i int) string { return fmt.Sprintf("legacy-%d", i+1) }

// invalidRun is a start request the gateway must refuse before admission.
type invalidRun struct {
	what string
	in   runIntent
	key  string
}

// invalidRuns are the workload's RunInvalid requests, cycling through the
// kinds the system's limits allow.
func (c *Clients) invalidRuns() []invalidRun {
	wl := c.wl
	valid := wl.keyIntent(1)
	var kinds []invalidRun
	noOrg := valid
	noOrg.org = ""
	notObject := valid
	notObject.payload = []byte(`["not","an","object"]`)
	kinds = append(kinds, invalidRun{what: "no org", in: noOrg}, invalidRun{what: "body not an object", in: notObject})
	if n := c.limits.MaxBodyBytes; n > 0 {
		big := valid
		big.payload = []byte(`{"input":"` + strings.Repeat("x", n) + `"}`)
		kinds = append(kinds, invalidRun{what: "body too large", in: big})
	}
	if n := c.limits.MaxKeyBytes; n > 0 {
		kinds = append(kinds, invalidRun{what: "key too long", in: valid, key: strings.Repeat("k", n+1)})
	}
	foreign := valid
	if wl.RunOrgs > 1 {
		foreign.org = runOrg(1) // wf-1 is org-1's
	} else {
		foreign.workflow = "wf-unregistered"
	}
	kinds = append(kinds, invalidRun{what: "workflow not the org's", in: foreign})
	out := make([]invalidRun, wl.RunInvalid)
	for i := range out {
		out[i] = kinds[i%len(kinds)]
		if out[i].key == "" {
			out[i].key = fmt.Sprintf("bad-%d", i+1)
		}
	}
	return out
}

// scheduleInvalidRuns sends each invalid request once, at a time drawn from
// its own PRNG.
func (c *Clients) scheduleInvalidRuns() {
	wl := c.wl
	rng := c.seeds.Child("run-invalid")
	for i, bad := range c.invalidRuns() {
		at := time.Second + time.Duration(rng.Int64N(int64(wl.SubmitWindow)))
		client := wl.Jobs + wl.StatusReads + wl.Runs + i
		c.pending++
		c.k.At(at, func() {
			c.k.Spawn("clients", fmt.Sprintf("invalid-run-%d", i), func(ctx context.Context) {
				defer func() { c.pending-- }()
				a := kernel.ActorOf(ctx)
				c.k.Tracef(a.Name(), "start run with %s", bad.what)
				c.recordRun(a, client, fmt.Sprintf("invalid-run-%d", i), bad.key, bad.in)
			})
		})
	}
}

// bootAdmission registers the workflows and starts the workflow engine and
// the reservation sweeper, once.
func (c *Clients) bootAdmission() {
	if c.runsStarted {
		return
	}
	c.runsStarted = true
	c.pending++
	c.k.Spawn("clients", "register-workflow", func(ctx context.Context) {
		defer func() { c.pending-- }()
		wl := c.wl
		if c.foreign != nil {
			values := c.foreign.ForeignRunKeyValues()
			for i := range wl.RunForeignKeys {
				key, value := foreignKey(i), values[i%len(values)]
				c.settle(ctx, history.OpPlantRunKey, key, value, "", func() error { return c.foreign.PlantRunKey(ctx, key, value) })
			}
		}
		for o := max(wl.RunOrgs-wl.RunUnlimitedOrgs, 0); o < wl.RunOrgs; o++ {
			org := runOrg(o)
			c.settle(ctx, history.OpSetRunLimit, org, "0", org, func() error { return c.admit.SetOrgRunLimit(ctx, org, 0) })
		}
		for w := range wl.RunWorkflows {
			c.register(ctx, runOrg(wl.workflowOrg(w)), runWorkflow(w))
		}
		if wl.RunOrgs == 1 && wl.RunWorkflows == 1 {
			return
		}
		// What a registration promises: another org cannot take a workflow,
		// the owner registering again changes nothing, ids are required.
		c.register(ctx, runOrg((wl.workflowOrg(0)+1)%max(wl.RunOrgs, 2)), runWorkflow(0))
		c.register(ctx, runOrg(wl.workflowOrg(0)), runWorkflow(0))
		c.register(ctx, "", runWorkflow(0))
		c.register(ctx, runOrg(0), "")
	})
	c.k.Spawn("workflow-engine", "run-completer", c.completeDueRuns)
	c.k.Spawn("sweeper", "reservation-sweeper", c.sweepReservations)
}

// register registers workflow for org, retrying while the outcome is
// unknown, and records each attempt.
func (c *Clients) register(ctx context.Context, org, workflow string) {
	a := kernel.ActorOf(ctx)
	for range registerMaxTries {
		op := history.ClientOp{Client: -1, Kind: history.OpRegisterWorkflow, Key: workflow, Input: org, Org: org,
			Workflow: workflow, Call: c.k.Now(), CallStep: c.k.Step()}
		err := c.admit.RegisterWorkflow(ctx, org, workflow)
		op.Return, op.RetStep = c.k.Now(), c.k.Step()
		switch {
		case err == nil:
			op.Output = history.RegisterOK
		case errors.Is(err, sut.ErrWorkflowOrgConflict):
			op.Output = history.RegisterConflict
		case errors.Is(err, sut.ErrInvalidRequest):
			op.Output = history.RegisterInvalid
		default:
			op.Output, op.Unknown = history.RegisterError, true
			c.k.Tracef(a.Name(), "register workflow %s for %q: %v", workflow, org, err)
		}
		c.hist.Ops = append(c.hist.Ops, op)
		if !op.Unknown {
			return
		}
		a.SleepUntil(c.k.Now() + time.Second)
	}
}

// settle runs call, an operation of kind on key that only succeeds or
// fails, retrying while it fails, and records each attempt.
func (c *Clients) settle(ctx context.Context, kind history.OpKind, key, input, org string, call func() error) {
	a := kernel.ActorOf(ctx)
	for range registerMaxTries {
		op := history.ClientOp{Client: -1, Kind: kind, Key: key, Input: input, Org: org, Call: c.k.Now(), CallStep: c.k.Step()}
		err := call()
		op.Return, op.RetStep, op.Output = c.k.Now(), c.k.Step(), history.OpOK
		if err != nil {
			op.Output, op.Unknown = history.OpError, true
			c.k.Tracef(a.Name(), "%s %s: %v", kind, key, err)
		}
		c.hist.Ops = append(c.hist.Ops, op)
		if err == nil {
			return
		}
		a.SleepUntil(c.k.Now() + time.Second)
	}
}

// startRun is one client starting a run with an idempotency key, retrying as a
// client that holds a key may: the same key and intent each time. Without a
// key it retries only what created nothing (a 429).
func (c *Clients) startRun(ctx context.Context, client, i int, key string, in runIntent, rng *rand.Rand) {
	defer func() { c.pending-- }()
	a := kernel.ActorOf(ctx)
	name := "run"
	if key == "" {
		name = "unkeyed-run"
	}
	body := in.payload
	for try := range runMaxTries {
		// Each attempt writes the same intent as it comes: a retry may go
		// through another client library than the first try.
		in.payload = reencode(body, rng)
		res, answered := c.recordRun(a, client, fmt.Sprintf("%s-%d-%d", name, i, try), key, in)
		if key == "" && (!answered || res.Status != 429) {
			return
		}
		if answered && !retryableRunReply(res) {
			return
		}
		a.SleepUntil(c.k.Now() + 5*time.Second + time.Duration(rng.Int64N(int64(10*time.Second))))
	}
}

// recordRun sends one start request and records it as an operation.
func (c *Clients) recordRun(a *kernel.Actor, client int, name, key string, in runIntent) (sut.RunReply, bool) {
	input := string(in.payload)
	if len(input) > opInputMax {
		input = input[:opInputMax] + "…"
	}
	op := history.ClientOp{Client: client, Kind: history.OpStartRun, Key: key, Input: input, Org: in.org,
		Workflow: in.workflow, InputBytes: len(in.payload), Call: c.k.Now(), CallStep: c.k.Step()}
	res, answered := c.requestRun(a, name, key, in)
	op.Return, op.RetStep = c.k.Now(), c.k.Step()
	op.Status, op.Output = res.Status, runReplyOutput(res)
	// A 5xx or no reply may hide an applied reservation or run: unknown.
	op.Unknown = !answered || res.Status >= 500
	c.hist.Ops = append(c.hist.Ops, op)
	return res, answered
}

// requestRun sends one start request to the gateway, which serves it on its
// own actor: a gateway crash kills the request, and the client sees no reply.
func (c *Clients) requestRun(a *kernel.Actor, name, key string, in runIntent) (sut.RunReply, bool) {
	var res sut.RunReply
	done := false
	c.k.Spawn("gateway", name, func(ctx context.Context) {
		res = c.admit.StartRun(ctx, in.org, in.workflow, key, in.payload)
		done = true
	})
	deadline := c.k.Now() + history.RunRequestTimeout
	for !done && c.k.Now() < deadline {
		a.SleepUntil(min(c.k.Now()+runReplyPoll, deadline))
	}
	if !done {
		c.k.Tracef(a.Name(), "start run %s: no reply", shortKey(key))
	}
	return res, done
}

// shortKey keeps a trace line short when a key is oversized on purpose.
func shortKey(key string) string {
	if len(key) > 40 {
		return key[:40] + "…"
	}
	return key
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
		for o := range c.wl.RunOrgs {
			org := runOrg(o)
			for _, runID := range c.obs.DueRuns(c.store, org, c.k.EpochTime().Add(c.k.Now()), d) {
				op := history.ClientOp{Client: -1, Kind: history.OpCompleteRun, Key: runID, Org: org, Call: c.k.Now(),
					CallStep: c.k.Step()}
				err := c.admit.CompleteRun(ctx, org, runID)
				op.Return, op.RetStep, op.Output = c.k.Now(), c.k.Step(), history.OpOK
				if err != nil {
					op.Output, op.Unknown = history.OpError, true
					c.k.Tracef(a.Name(), "complete run %s: %v", runID, err)
				}
				c.hist.Ops = append(c.hist.Ops, op)
			}
		}
	}
}

// sweepReservations runs the gateway's sweeper of stale reservations, once
// a stale period (at least a second, whatever the system says), and records
// each sweep with the count it reported.
func (c *Clients) sweepReservations(ctx context.Context) {
	a := kernel.ActorOf(ctx)
	for {
		a.SleepUntil(c.k.Now() + max(c.admit.StaleReservationAfter(), time.Second))
		op := history.ClientOp{Client: -1, Kind: history.OpSweep, Call: c.k.Now(), CallStep: c.k.Step()}
		n, err := c.admit.SweepStaleReservations(ctx)
		op.Return, op.RetStep, op.Output, op.Unknown = c.k.Now(), c.k.Step(), strconv.Itoa(n), err != nil
		c.hist.Ops = append(c.hist.Ops, op)
		if n > 0 || err != nil {
			c.k.Tracef(a.Name(), "swept %d stale reservations, err=%v", n, err)
		}
	}
}

// Admission reads the run admission state (idempotency keys, reservations
// and runs) through the observer.
func (c *Clients) Admission() history.AdmissionSnapshot {
	snap := c.obs.Admission(c.store, c.k.EpochTime())
	if c.admit != nil {
		snap.StaleAfter = c.admit.StaleReservationAfter()
	}
	return snap
}
