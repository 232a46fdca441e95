package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// start adds a start of workflow for org with body, answered status and
// output (a run id or a 409 reason); status 0 is no reply.
func (s *story) start(client int, org, workflow, key, body string, status int, output string) *story {
	call := s.tick()
	callAt := s.at()
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: client, Kind: history.OpStartRun, Key: key, Input: body,
		InputBytes: len(body), Org: org, Workflow: workflow, Status: status, Output: output, Call: callAt, Return: s.at(),
		CallStep: call, RetStep: ret, Unknown: status == 0 || status >= 500})
	return s
}

// register adds a registration of workflow for org answered output.
func (s *story) register(org, workflow, output string) *story {
	call := s.tick()
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: -1, Kind: history.OpRegisterWorkflow, Key: workflow, Input: org,
		Org: org, Workflow: workflow, Output: output, CallStep: call, RetStep: ret, Return: s.at(),
		Unknown: output == history.RegisterError})
	return s
}

// sweep adds a sweep that reported n removed (err: it failed), with the
// store commands cmds made during it.
func (s *story) sweep(n string, err bool, cmds ...history.RunKeyCommand) *story {
	call := s.tick()
	for _, c := range cmds {
		c.Step, c.Time = s.tick(), s.at()
		c.Op, c.Actor, c.Returned = history.RunKeySweep, "sweeper/reservation-sweeper", true
		s.h.RunKeys = append(s.h.RunKeys, c)
	}
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: -1, Kind: history.OpSweep, Output: n, Unknown: err,
		CallStep: call, RetStep: ret, Return: s.at()})
	return s
}

// keyCommand adds a store command on key's value from before to after,
// issued at sent.
func (s *story) keyCommand(op history.RunKeyOp, key, before, after string, sent time.Duration) *story {
	s.tick()
	s.h.RunKeys = append(s.h.RunKeys, history.RunKeyCommand{Step: s.step, Time: s.at(), Sent: sent, Actor: "gateway/run-0-0",
		Key: key, Op: op, Before: before, After: after, Returned: true})
	return s
}

func (s *story) fault(actor string) *story {
	s.tick()
	s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Actor: actor, Kind: "StoreReadFails",
		Effect: history.EffectFailBeforeApply, Point: history.PointRedis, Target: "get wf:org:limit:org-1"})
	return s
}

func (s *story) checkContract(snap history.AdmissionSnapshot, gateway prometheus.Gatherer) *Result {
	s.h.End = s.at() + time.Second
	if snap.StaleAfter == 0 {
		snap.StaleAfter = 20 * time.Second
	}
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Admission: snap, System: cordumSpec, GatewayMetrics: gateway})
}

// checkContractOf judges the story against sys, with the owned workflows.
func (s *story) checkContractOf(sys sut.Spec) *Result {
	s.h.End = s.at() + time.Second
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, Admission: history.AdmissionSnapshot{
		Workflows: owned.Workflows, StaleAfter: 20 * time.Second}, System: sys})
}

var owned = history.AdmissionSnapshot{Workflows: map[string]string{"wf-1": "org-1", "wf-2": "org-2"}}

const body = `{"input":"key-1"}`

// Invalid starts refused as promised, valid ones admitted or turned away for
// capacity: legal.
func TestRunRequestsRefusedAsPromisedPass(t *testing.T) {
	big := `{"input":"` + strings.Repeat("x", cordumSpec.RunRequests.MaxBodyBytes) + `"}`
	s := newStory().
		start(1, "", "wf-1", "bad-1", body, 400, "").
		start(2, "org-1", "wf-1", "bad-2", `[1]`, 400, "").
		start(3, "org-1", "wf-1", "bad-3", big, 413, "").
		start(4, "org-1", "wf-1", strings.Repeat("k", 256), body, 400, "").
		start(5, "org-1", "wf-1", "key-1", body, 200, runA).
		start(6, "org-1", "wf-1", "", `{ "input": "key-2" }`, 429, "").
		start(7, "org-1", "wf-1", "bad-4", `{`, 400, "")
	r := s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())
}

func TestRunRequestRefusedWronglyIsCaught(t *testing.T) {
	for name, s := range map[string]*story{
		"valid start refused as too large": newStory().start(1, "org-1", "wf-1", "key-1", body, 413, ""),
		"valid start refused as malformed": newStory().start(1, "org-1", "wf-1", "key-1", body, 400, ""),
		"start without an org admitted":    newStory().start(1, "", "wf-1", "bad-1", body, 200, runA),
		"oversized start answered 400": newStory().start(1, "org-1", "wf-1", "bad-1",
			`{"a":"`+strings.Repeat("x", 1<<20)+`"}`, 400, ""),
		// The limits are the largest a valid start may have, not the least an invalid one has.
		"key of exactly the limit refused": newStory().start(1, "org-1", "wf-1",
			strings.Repeat("k", cordumSpec.RunRequests.MaxKeyBytes), body, 400, ""),
		"body of exactly the limit refused": newStory().start(1, "org-1", "wf-1", "key-1",
			`{"a":"`+strings.Repeat("x", cordumSpec.RunRequests.MaxBodyBytes-len(`{"a":""}`))+`"}`, 413, ""),
	} {
		t.Run(name, func(t *testing.T) {
			r := s.checkContract(owned, nil)
			require.Contains(t, checkers(r), "run_request_refused", r.Summary())
		})
	}
}

// Registrations agree with the owner the store holds; a start for a
// workflow its org registered is not 404, and another org's is not admitted.
func TestWorkflowOwnershipPasses(t *testing.T) {
	s := newStory().
		register("org-1", "wf-1", history.RegisterOK).
		register("org-2", "wf-2", history.RegisterOK).
		register("org-2", "wf-1", history.RegisterConflict).
		register("org-1", "wf-1", history.RegisterOK).
		register("", "wf-1", history.RegisterInvalid).
		register("org-1", "", history.RegisterInvalid).
		start(1, "org-2", "wf-1", "bad-1", body, 404, "").
		start(2, "org-1", "wf-1", "key-1", body, 200, runA)
	// A registration that failed under a fault of its own.
	call := s.tick()
	s.fault("clients/register-workflow")
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: -1, Kind: history.OpRegisterWorkflow, Key: "wf-1", Input: "org-1",
		Org: "org-1", Workflow: "wf-1", Output: history.RegisterError, Unknown: true, CallStep: call, RetStep: ret})
	r := s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())
}

func TestWorkflowOwnershipBrokenIsCaught(t *testing.T) {
	for name, c := range map[string]struct {
		s       *story
		checker string
	}{
		"registration of another org's workflow answered ok": {newStory().register("org-2", "wf-1", history.RegisterOK),
			"workflow_registration"},
		"the owner's registration answered conflict": {newStory().register("org-1", "wf-1", history.RegisterConflict),
			"workflow_registration"},
		"both ids refused as invalid": {newStory().register("org-1", "wf-1", history.RegisterInvalid), "workflow_registration"},
		"an empty org accepted":       {newStory().register("", "wf-1", history.RegisterOK), "workflow_registration"},
		"404 for a workflow the org registered": {newStory().register("org-1", "wf-1", history.RegisterOK).
			start(1, "org-1", "wf-1", "key-1", body, 404, ""), "run_workflow_owner"},
		"another org's workflow admitted": {newStory().start(1, "org-2", "wf-1", "key-1", body, 200, runA),
			"run_workflow_owner"},
		"registration failed with no fault": {newStory().register("org-1", "wf-1", history.RegisterError),
			"admission_error_without_fault"},
	} {
		t.Run(name, func(t *testing.T) {
			r := c.s.checkContract(owned, nil)
			require.Equal(t, []string{c.checker}, checkers(r), r.Summary())
		})
	}
}

// A 500 needs a failed store command of the gateway while it was served; a
// sweep's error one of the sweeper's.
func TestAdmissionErrorsNeedAFault(t *testing.T) {
	s := newStory().start(1, "org-1", "wf-1", "key-1", body, 500, "").start(1, "org-1", "wf-1", "key-1", body, 200, runA)
	require.Equal(t, []string{"admission_error_without_fault"}, checkers(s.checkContract(owned, nil)))

	s = newStory()
	call := s.tick()
	s.fault("gateway/run-0-0")
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: 1, Kind: history.OpStartRun, Key: "key-1", Input: body, Org: "org-1",
		Workflow: "wf-1", Status: 500, Unknown: true, CallStep: call, RetStep: ret, Return: s.at()})
	s.start(1, "org-1", "wf-1", "key-1", body, 200, runA)
	r := s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	// Only a store fault of the gateway while the start was served explains it.
	servedWith := func(f history.FaultRecord) []string {
		s := newStory()
		s.step = 3
		s.h.Ops = append(s.h.Ops, history.ClientOp{Client: 1, Kind: history.OpStartRun, Key: "key-1", Input: body, Org: "org-1",
			Workflow: "wf-1", Status: 500, Unknown: true, CallStep: 1, RetStep: 3, Return: s.at()})
		f.Effect, f.Target = history.EffectFailBeforeApply, "get wf:org:limit:org-1"
		s.h.Faults = append(s.h.Faults, f)
		s.wait(2*time.Second).start(1, "org-1", "wf-1", "key-1", body, 200, runA)
		return checkers(s.checkContract(owned, nil))
	}
	require.Empty(t, servedWith(history.FaultRecord{Step: 2, Actor: "gateway/run-0-0", Point: history.PointRedis}))
	for name, f := range map[string]history.FaultRecord{
		"a fault after the reply": {Step: 4, Actor: "gateway/run-0-0", Point: history.PointRedis},
		"a replica's fault":       {Step: 2, Actor: "replica-1/h", Point: history.PointRedis},
		"a bus fault":             {Step: 2, Actor: "gateway/run-0-0", Point: history.PointPublish},
	} {
		require.Equal(t, []string{"admission_error_without_fault"}, servedWith(f), name)
	}

	s = newStory().fault("gateway/run-0-0").sweep("0", true)
	require.Equal(t, []string{"admission_error_without_fault"}, checkers(s.checkContract(owned, nil)),
		"the gateway's fault is not the sweeper's")
}

// The sweeper and a takeover reclaim only stale reservations, counted from
// when the reservation was issued in true time.
func TestReservationReclaimedFreshIsCaught(t *testing.T) {
	v1, v2 := runA+"|fp", runB+"|fp"
	legal := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, 0).wait(25*time.Second).
		keyCommand(history.RunKeyReserve, "k1", v1, v2, 25*time.Second).wait(25*time.Second).
		sweep("1", false, history.RunKeyCommand{Key: "k1", Before: v2, After: ""})
	r := legal.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	swept := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, 0).wait(5*time.Second).
		sweep("1", false, history.RunKeyCommand{Key: "k1", Before: v1, After: ""})
	r = swept.checkContract(owned, nil)
	require.Equal(t, []string{"reservation_reclaimed_fresh"}, checkers(r), r.Summary())
	require.Contains(t, r.Violations[0].Message, "swept")

	taken := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, 0).wait(10*time.Second).
		keyCommand(history.RunKeyReserve, "k1", v1, v2, 10*time.Second)
	r = taken.checkContract(owned, nil)
	require.Equal(t, []string{"reservation_reclaimed_fresh"}, checkers(r), r.Summary())
	require.Contains(t, r.Violations[0].Message, "took over")

	// A reservation's age counts from when its write was issued, not from 0.
	late := newStory().wait(10*time.Second).keyCommand(history.RunKeyReserve, "k1", "", v1, 10*time.Second).
		wait(5*time.Second).keyCommand(history.RunKeyReserve, "k1", v1, v2, 15*time.Second)
	require.Equal(t, []string{"reservation_reclaimed_fresh"}, checkers(late.checkContract(owned, nil)), "taken over 5s after its write")

	// A retry that finds the key holding its own value changes nothing.
	retried := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, 0).wait(5*time.Second).
		keyCommand(history.RunKeyReserve, "k1", v1, v1, 5*time.Second)
	require.False(t, retried.checkContract(owned, nil).Failed())

	// The owner's own cleanup is not a reclaim.
	released := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, 0).
		keyCommand(history.RunKeyRelease, "k1", v1, "", time.Second)
	require.False(t, released.checkContract(owned, nil).Failed())
}

// A sweep reports what the store saw it remove; a failed one may report one
// fewer (the last removal's reply lost).
func TestSweepCountIsChecked(t *testing.T) {
	stale := history.RunKeyCommand{Key: "k1", Before: runA + "|fp", After: ""}
	gone := history.RunKeyCommand{Key: "k2", Before: "", After: ""} // an index entry whose key was gone
	r := newStory().sweep("1", false, stale, gone).checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	r = newStory().sweep("2", false, stale, gone).checkContract(owned, nil)
	require.Equal(t, []string{"sweep_count"}, checkers(r), "only the removal counts")

	r = newStory().sweep("0", false, stale).checkContract(owned, nil)
	require.Equal(t, []string{"sweep_count"}, checkers(r))

	s := newStory().fault("sweeper/reservation-sweeper")
	s.sweep("0", true, stale)
	s.h.Ops[len(s.h.Ops)-1].CallStep = s.h.Faults[0].Step
	r = s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())
}

// The admission's counters against the replies clients saw and the cleanups
// the store saw fail.
func TestAdmissionMetricsAgainstGroundTruth(t *testing.T) {
	counters := func(codes map[string]int, cleanupFailures int) prometheus.Gatherer {
		reg := prometheus.NewRegistry()
		adm := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_run_admission_total"}, []string{"code"})
		cleanup := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_idempotency_cleanup_failure_total"},
			[]string{"context"})
		reg.MustRegister(adm, cleanup)
		for code, n := range codes {
			adm.WithLabelValues(code).Add(float64(n))
		}
		cleanup.WithLabelValues("concurrency_limit").Add(float64(cleanupFailures))
		return reg
	}
	story := func() *story {
		s := newStory().start(1, "org-1", "wf-1", "key-1", body, 200, runA).
			start(2, "org-1", "wf-1", "key-2", `{"input":"key-2"}`, 429, "").
			start(3, "org-1", "wf-1", "key-3", `{"input":"key-3"}`, 0, "").
			start(2, "org-1", "wf-1", "key-2", `{"input":"key-2"}`, 200, runB).
			keyCommand(history.RunKeyReserve, "key-2", "", runB+"|fp", 0)
		s.h.RunKeys = append(s.h.RunKeys, history.RunKeyCommand{Step: s.tick(), Key: "key-2", Op: history.RunKeyRelease,
			Before: runB + "|fp", After: runB + "|fp", Returned: true, Failed: true})
		return s
	}
	legal := map[string]map[string]int{
		"the unanswered start never got through": {"200": 2, "429": 1},
		"it was answered too late":               {"200": 2, "429": 1, "503": 1},
	}
	for name, codes := range legal {
		r := story().checkContract(owned, counters(codes, 1))
		require.False(t, r.Failed(), "%s: %s", name, r.Summary())
	}
	for name, c := range map[string]struct {
		codes   map[string]int
		cleanup int
	}{
		"a reply not counted":           {map[string]int{"200": 1, "429": 1}, 1},
		"more 429s than could be sent":  {map[string]int{"200": 2, "429": 3}, 1},
		"a cleanup failure not counted": {map[string]int{"200": 2, "429": 1}, 0},
		"a cleanup counted as failed":   {map[string]int{"200": 2, "429": 1}, 2},
	} {
		r := story().checkContract(owned, counters(c.codes, c.cleanup))
		require.Equal(t, []string{"admission_metrics"}, checkers(r), name)
	}
}

// A key bound to one intent is never refused as a mismatch to that intent;
// another intent is.
func TestMismatchForTheBindingsOwnIntentIsCaught(t *testing.T) {
	legal := newStory().start(1, "org-1", "wf-1", "key-1", body, 200, runA).
		start(2, "org-1", "wf-3", "key-1", body, 409, history.RunReplyMismatch).
		start(3, "org-2", "wf-2", "key-1", body, 409, history.RunReplyMismatch).
		start(4, "org-1", "wf-1", "key-1", `{"input":"key-1","variant":4}`, 409, history.RunReplyMismatch).
		start(5, "org-1", "wf-1", "key-1", `{ "input" : "key-1" }`, 200, runA)
	r := legal.checkContract(history.AdmissionSnapshot{Workflows: map[string]string{"wf-1": "org-1", "wf-2": "org-2",
		"wf-3": "org-1"}}, nil)
	require.False(t, r.Failed(), r.Summary())

	bad := newStory().start(1, "org-1", "wf-1", "key-1", body, 200, runA).
		start(2, "org-1", "wf-1", "key-1", body, 409, history.RunReplyMismatch)
	r = bad.checkContract(owned, nil)
	require.Equal(t, []string{"run_conflict_justified", "run_admission"}, checkers(r),
		"no other intent was ever sent, and the key is bound to this one")

	replayed := newStory().start(1, "org-1", "wf-1", "key-1", body, 200, runA).
		start(2, "org-2", "wf-2", "key-1", body, 200, runA)
	r = replayed.checkContract(owned, nil)
	require.Equal(t, []string{"run_admission"}, checkers(r), "another org's start replayed the run")

	// A retry that writes the body another way (fields reordered, a
	// character escaped) is the same intent: refusing it is unjustified,
	// replaying it is right.
	const twoFields = `{"input":"key-1","priority":2}`
	for _, form := range []string{`{"priority":2,"input":"key-1"}`, `{"input":"key\u002d1","priority":2}`} {
		refused := newStory().start(1, "org-1", "wf-1", "key-1", twoFields, 200, runA).
			start(2, "org-1", "wf-1", "key-1", form, 409, history.RunReplyMismatch)
		require.Equal(t, []string{"run_conflict_justified", "run_admission"}, checkers(refused.checkContract(owned, nil)), form)
		again := newStory().start(1, "org-1", "wf-1", "key-1", twoFields, 200, runA).
			start(2, "org-1", "wf-1", "key-1", form, 200, runA)
		require.False(t, again.checkContract(owned, nil).Failed(), form)
	}
}

// setup adds a set-up operation of kind (a limit, a planted value) on key.
func (s *story) setup(kind history.OpKind, key, input, output string) *story {
	call := s.tick()
	ret := s.tick()
	s.h.Ops = append(s.h.Ops, history.ClientOp{Client: -1, Kind: kind, Key: key, Input: input, Output: output,
		CallStep: call, RetStep: ret, Return: s.at(), Unknown: output == history.OpError})
	return s
}

// An org without a limit is never turned away with 429; one with a limit
// may be.
func TestUnlimitedOrgTurnedAwayIsCaught(t *testing.T) {
	s := newStory().setup(history.OpSetRunLimit, "org-2", "0", history.OpOK).
		start(1, "org-1", "wf-1", "", body, 429, "").
		start(2, "org-2", "wf-2", "", body, 200, runA)
	r := s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	s = newStory().setup(history.OpSetRunLimit, "org-2", "0", history.OpOK).start(2, "org-2", "wf-2", "", body, 429, "")
	require.Equal(t, []string{"run_limit"}, checkers(s.checkContract(owned, nil)))

	s = newStory().setup(history.OpSetRunLimit, "org-2", "0", history.OpOK).start(2, "org-2", "wf-2", "", body, 503, "")
	s.h.Ops[len(s.h.Ops)-1].Return += 2 * time.Second
	require.Equal(t, []string{"run_limit"}, checkers(s.checkContract(owned, nil)), "busy, with no lock to be busy")

	s = newStory().setup(history.OpSetRunLimit, "org-2", "0", history.OpError)
	require.Equal(t, []string{"admission_error_without_fault"}, checkers(s.checkContract(owned, nil)))

	// Only a limit of none, set, lifts the limit: a limit of 5, or a lift
	// that failed, leaves the org to be turned away.
	for why, set := range map[string][2]string{"a limit of 5": {"5", history.OpOK}, "a failed lift": {"0", history.OpError}} {
		s = newStory().setup(history.OpSetRunLimit, "org-2", set[0], set[1]).start(2, "org-2", "wf-2", "", body, 429, "")
		require.NotContains(t, checkers(s.checkContract(owned, nil)), "run_limit", why)
	}
}

// A key holding another writer's value is refused as used and keeps it.
func TestForeignKeyResolvedIsCaught(t *testing.T) {
	const legacy = "0b9f1c6e-5a7d-4c3b-9e2f-8a1b2c3d4e5f"
	legal := newStory().setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK).
		start(1, "org-1", "wf-1", "legacy-1", body, 409, history.RunReplyUsed).
		start(2, "org-2", "wf-1", "legacy-1", body, 404, "").
		keyCommand(history.RunKeyReserve, "legacy-1", legacy, legacy, 0)
	r := legal.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	for name, s := range map[string]*story{
		"admitted": newStory().setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK).
			start(1, "org-1", "wf-1", "legacy-1", body, 200, runA),
		"refused as a mismatch": newStory().setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK).
			start(1, "org-1", "wf-1", "legacy-1", body, 409, history.RunReplyMismatch),
		"taken over": newStory().setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK).
			keyCommand(history.RunKeyReserve, "legacy-1", legacy, runA+"|fp", 0),
	} {
		t.Run(name, func(t *testing.T) {
			r := s.checkContract(owned, nil)
			require.Contains(t, checkers(r), "run_key_foreign", r.Summary())
		})
	}
}

// A 503 comes from a fault or from a busy admission, which gives up only
// after waiting its turn.
func TestBusyTooSoonIsCaught(t *testing.T) {
	s := newStory().start(1, "org-1", "wf-1", "", body, 503, "")
	require.Equal(t, []string{"admission_error_without_fault"}, checkers(s.checkContract(owned, nil)))

	s.h.Ops[0].Return += 2 * time.Second
	r := s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())
}

// No org has more runs active than its limit: the system's, or a looser
// one set for it.
func TestActiveRunsOverTheLimitAreCaught(t *testing.T) {
	count := func(s *story, org string, active int) *story {
		s.h.RunCounts = append(s.h.RunCounts, history.RunCount{Step: s.tick(), Time: s.at(), Actor: "gateway/run-0-0",
			Org: org, Active: active})
		return s
	}
	s := count(count(newStory(), "org-1", 1), "org-1", 0)
	s = count(s, "org-1", 2)
	r := s.checkContract(owned, nil) // cordumSpec: one run at a time
	require.Equal(t, []string{"run_limit"}, checkers(r))

	s = count(newStory().setup(history.OpSetRunLimit, "org-1", "2", history.OpOK), "org-1", 2)
	s = count(s.setup(history.OpSetRunLimit, "org-2", "0", history.OpOK), "org-2", 7)
	r = s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	// A limit raised only by a command that failed (an unknown one may have
	// landed) or that was not a number stays at the system's.
	s = count(newStory().setup(history.OpSetRunLimit, "org-1", "2", "refused"), "org-1", 2)
	require.Equal(t, []string{"run_limit"}, checkers(s.checkContract(owned, nil)))
	s = count(newStory().setup(history.OpSetRunLimit, "org-1", "2", history.OpError), "org-1", 2)
	require.NotContains(t, checkers(s.checkContract(owned, nil)), "run_limit", "the failed command may have landed")

	unlimited := cordumSpec
	unlimited.RunLimit = 0
	s = count(newStory(), "org-1", 3)
	require.Empty(t, only(s.checkContractOf(unlimited), "run_limit"), "a system without a run limit")
}

// A mismatch needs another intent sent with the key, "used" another
// writer's value: a key only ever sent with one intent, and only written by
// the system, can be neither.
func TestConflictsWithoutCauseAreCaught(t *testing.T) {
	other := `{"input":"key-1","variant":2}`
	legal := newStory().start(1, "org-1", "wf-1", "key-1", other, 0, "").
		start(2, "org-1", "wf-1", "key-1", body, 409, history.RunReplyMismatch).
		setup(history.OpPlantRunKey, "legacy-1", "0b9f1c6e-5a7d-4c3b-9e2f-8a1b2c3d4e5f", history.OpOK).
		start(3, "org-1", "wf-1", "legacy-1", body, 409, history.RunReplyUsed)
	r := legal.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	mismatch := newStory().start(1, "org-1", "wf-1", "key-1", body, 0, "").
		start(2, "org-1", "wf-1", "key-1", `{ "input": "key-1" }`, 409, history.RunReplyMismatch)
	require.Equal(t, []string{"run_conflict_justified"}, checkers(mismatch.checkContract(owned, nil)),
		"the same intent, whitespace aside")

	used := newStory().start(1, "org-1", "wf-1", "key-1", body, 200, runA).
		start(2, "org-1", "wf-1", "key-1", body, 409, history.RunReplyUsed)
	require.Equal(t, []string{"run_conflict_justified"}, checkers(used.checkContract(owned, nil)))
}

// A store loss may have undone the writes behind a promise (a registration,
// a lifted limit, a planted value): after one, a reply that contradicts them
// is no finding. The same replies without the loss are.
func TestAStoreLossExcusesWhatItMayHaveUndone(t *testing.T) {
	const legacy = "0b9f1c6e-5a7d-4c3b-9e2f-8a1b2c3d4e5f"
	build := func(lost bool) *Result {
		s := newStory()
		if lost {
			s.h.StoreLosses = append(s.h.StoreLosses, history.StoreLoss{Step: s.tick(), Time: s.at(), Since: 0})
		}
		s.start(1, "org-2", "wf-1", "key-1", body, 200, runA).
			setup(history.OpSetRunLimit, "org-2", "0", history.OpOK).
			start(2, "org-2", "wf-2", "key-2", `{"input":"key-2"}`, 429, "").
			setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK).
			start(3, "org-1", "wf-1", "legacy-1", `{"input":"key-3"}`, 200, runB).
			start(4, "org-1", "wf-1", "key-4", `{"input":"key-4"}`, 409, history.RunReplyUsed)
		return s.checkContract(owned, nil)
	}
	for _, name := range []string{"run_workflow_owner", "run_limit", "run_key_foreign", "run_conflict_justified"} {
		require.Empty(t, only(build(true), name), name)
		require.NotEmpty(t, only(build(false), name), name)
	}
}

// Only a start well-formed enough to reach the store is judged for the
// workflow's owner: one refused for its form answers for its form alone.
func TestAMalformedStartIsJudgedForItsFormOnly(t *testing.T) {
	r := newStory().start(1, "org-2", "wf-1", "bad-1", `[1]`, 200, runA).checkContract(owned, nil)
	require.Contains(t, checkers(r), "run_request_refused")
	require.NotContains(t, checkers(r), "run_workflow_owner")
}

// A key of 40 bytes is named whole in a finding; a longer one is cut there.
func TestARefusedKeyIsNamedWholeUpToFortyBytes(t *testing.T) {
	for key, named := range map[string]string{
		strings.Repeat("k", 40): "(key " + strings.Repeat("k", 40) + ",",
		strings.Repeat("k", 41): "(key " + strings.Repeat("k", 40) + "…,",
	} {
		v := only(newStory().start(1, "org-1", "wf-1", key, body, 400, "").checkContract(owned, nil), "run_request_refused")
		require.Len(t, v, 1)
		require.Contains(t, v[0].Message, named)
	}
}

// A conflict for a workflow nobody registered names no owner.
func TestAConflictForAnUnownedWorkflowSaysNobody(t *testing.T) {
	v := only(newStory().register("org-1", "wf-9", history.RegisterConflict).checkContract(owned, nil), "workflow_registration")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "the store says the workflow is nobody's")
}

// A store fault in the very step the start was called, or the step it was
// answered, explains its 500.
func TestAFaultAtTheStartsEdgesExplainsIts500(t *testing.T) {
	for _, step := range []uint64{1, 3} {
		s := newStory()
		s.step = 3
		s.h.Ops = append(s.h.Ops, history.ClientOp{Client: 1, Kind: history.OpStartRun, Key: "key-1", Input: body, Org: "org-1",
			Workflow: "wf-1", Status: 500, Unknown: true, CallStep: 1, RetStep: 3, Return: s.at()})
		s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: step, Actor: "gateway/run-0-0", Point: history.PointRedis,
			Effect: history.EffectFailBeforeApply, Target: "get wf:org:limit:org-1"})
		s.wait(2*time.Second).start(1, "org-1", "wf-1", "key-1", body, 200, runA)
		require.Empty(t, only(s.checkContract(owned, nil), "admission_error_without_fault"), "a fault at step %d", step)
	}
}

// A 503 too soon says how long the start waited.
func TestABusyTooSoonSaysHowLongItWaited(t *testing.T) {
	v := only(newStory().start(1, "org-1", "wf-1", "", body, 503, "").checkContract(owned, nil), "admission_error_without_fault")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "a start answered 503 after 1s,")
}

// The stale period is the system's promise, not what it reports about
// itself, and a reservation reclaimed a hair under it (less than the
// index's millisecond) is stale enough.
func TestReservationStalenessAtItsBounds(t *testing.T) {
	v1, v2 := runA+"|fp", runB+"|fp"
	// Written at 1ms (or 2ms), taken over at 20s.
	takeover := func(sent time.Duration) *story {
		s := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, sent)
		s.step = 19
		return s.keyCommand(history.RunKeyReserve, "k1", v1, v2, 20*time.Second)
	}
	require.Empty(t, only(takeover(time.Millisecond).checkContract(owned, nil), "reservation_reclaimed_fresh"),
		"19.999s old: stale within the index's millisecond")
	require.Len(t, only(takeover(2*time.Millisecond).checkContract(owned, nil), "reservation_reclaimed_fresh"), 1)

	// The system promises 20s; the 5s it reports does not let a takeover at 10s pass.
	early := newStory().keyCommand(history.RunKeyReserve, "k1", "", v1, 0).wait(10*time.Second).
		keyCommand(history.RunKeyReserve, "k1", v1, v2, 10*time.Second)
	require.Len(t, only(early.checkContract(history.AdmissionSnapshot{Workflows: owned.Workflows, StaleAfter: 5 * time.Second}, nil),
		"reservation_reclaimed_fresh"), 1)
	// A system that promises no period is held to the one it reports.
	silent := cordumSpec
	silent.StaleReservationAfter = 0
	require.Len(t, only(early.checkContractOf(silent), "reservation_reclaimed_fresh"), 1)
}

// The admission counter is read by its code alone, whatever other labels
// split it; a cleanup that succeeded is no failure.
func TestAdmissionCountersReadTheirOwnLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	adm := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_run_admission_total"}, []string{"code", "path"})
	cleanup := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_idempotency_cleanup_failure_total"},
		[]string{"context"})
	reg.MustRegister(adm, cleanup)
	adm.WithLabelValues("200", "/runs").Add(1)
	cleanup.WithLabelValues("concurrency_limit").Add(0)
	s := newStory().start(1, "org-1", "wf-1", "key-1", body, 200, runA).
		keyCommand(history.RunKeyReserve, "key-1", "", runA+"|fp", 0).
		keyCommand(history.RunKeyRelease, "key-1", runA+"|fp", "", time.Second)
	r := s.checkContract(owned, reg)
	require.Empty(t, only(r, "admission_metrics"), r.Summary())
}

// A run limit set for an org is the loosest it may have, not no limit; and
// another org's limit does not loosen it.
func TestARunLimitSetIsALimit(t *testing.T) {
	count := func(s *story, org string, active int) *story {
		s.h.RunCounts = append(s.h.RunCounts, history.RunCount{Step: s.tick(), Time: s.at(), Actor: "gateway/run-0-0",
			Org: org, Active: active})
		return s
	}
	over := count(newStory().setup(history.OpSetRunLimit, "org-1", "2", history.OpOK), "org-1", 3)
	require.Len(t, only(over.checkContract(owned, nil), "run_limit"), 1, "3 runs over a limit of 2")
	other := count(newStory().setup(history.OpSetRunLimit, "org-2", "3", history.OpOK), "org-1", 2)
	require.Len(t, only(other.checkContract(owned, nil), "run_limit"), 1, "org-2's limit is not org-1's")
}

// A value planted is another writer's from its first plant: planting it
// again later does not make a "used" refusal in between unjustified, and a
// plant that was refused left no value to resolve.
func TestPlantedValuesCountFromTheFirstThatLanded(t *testing.T) {
	const legacy = "0b9f1c6e-5a7d-4c3b-9e2f-8a1b2c3d4e5f"
	s := newStory().setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK).
		start(1, "org-1", "wf-1", "legacy-1", body, 409, history.RunReplyUsed).
		setup(history.OpPlantRunKey, "legacy-1", legacy, history.OpOK)
	r := s.checkContract(owned, nil)
	require.False(t, r.Failed(), r.Summary())

	refused := newStory().setup(history.OpPlantRunKey, "legacy-1", legacy, "refused").
		start(1, "org-1", "wf-1", "legacy-1", body, 200, runA)
	require.Empty(t, only(refused.checkContract(owned, nil), "run_key_foreign"))
}
