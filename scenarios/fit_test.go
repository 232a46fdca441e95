package scenarios

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

// respec is a system with its spec changed: a stand-in for a dispatcher
// that lacks some of Cordum's features.
type respec struct {
	sut.System
	name string
	edit func(*sut.Spec)
}

func (r respec) Name() string { return r.name }

func (r respec) Spec(o sut.Options) sut.Spec {
	s := r.System.Spec(o)
	r.edit(&s)
	return s
}

// withoutLock is Cordum's spec without its job lock and the counter that
// counts a lock given up.
func withoutLock(s *sut.Spec) {
	s.JobLock, s.LockRenewFailures = false, 0
	s.Metrics.LockFenced = ""
	branches := map[string]string{}
	for k, v := range s.Metrics.Branches {
		if v != "lock_fenced" {
			branches[k] = v
		}
	}
	s.Metrics.Branches = branches
}

// newcomer is what another team's small dispatcher declares: no RUNNING
// state, cancels written by the gateway, no tenant caps, no invalid-request
// code, no job lock, few writes.
func newcomer(s *sut.Spec) {
	withoutLock(s)
	s.Running = ""
	s.Cancels = sut.CancelByGateway
	s.TenantActive, s.ReasonTenantLimit = nil, ""
	s.ReasonInvalidRequest = ""
	s.ReplicaWritesPerJob = 2
}

func caseNamed(t *testing.T, s Suite, name string) Case {
	t.Helper()
	for _, c := range s.Cases {
		if c.Finding == "" && c.Scenario.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return Case{}
}

func kindNames(ks []faults.Kind) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

// Cordum's engine has every feature but a worker gate that writes (its
// workers' fence only reads) and promises exactly once: its fitted release
// suite is the release suite as written, less that one fault kind.
func TestCordumReleaseFitsUnchanged(t *testing.T) {
	plain, fitted := Release(), Release().For(cordum.System{})
	require.Len(t, fitted.Cases, len(plain.Cases))
	require.Empty(t, fitted.NotApplicable())
	for i, c := range fitted.Cases {
		p := plain.Cases[i]
		require.Equal(t, p.Scenario.Name, c.Scenario.Name)
		require.Equal(t, p.Finding, c.Finding)
		require.Equal(t, p.Seeds, c.Seeds)
		require.Equal(t, p.Sometimes, c.Sometimes, c.Scenario.Name)
		want := kindNames(p.Scenario.Faults)
		if c.Scenario.Name == actorIO.Name {
			require.Equal(t, []string{"fault kind WorkerStoreReplyLost: the system has no worker dispatch gate that claims in the store"},
				c.Dropped)
			want = slices.DeleteFunc(want, func(k string) bool { return k == faults.WorkerStoreReplyLost.Name })
		} else {
			require.Empty(t, c.Dropped, c.Scenario.Name)
		}
		require.Equal(t, want, kindNames(c.Scenario.DeclaredFaults()), c.Scenario.Name)
		// Same fault options, so the same draws.
		require.Equal(t, p.Scenario.FaultOptions(1).String(), c.Scenario.FaultOptions(1).String(), c.Scenario.Name)
	}
	for _, c := range Exploratory().For(cordum.System{}).Cases {
		require.Empty(t, c.Dropped, "exploratory %s", c.Scenario.Name)
	}
}

// The outbox's release suite is what its spec implies: no lock, no tenant
// caps, no run admission, an at-least-once promise.
func TestOutboxReleaseFitsItsSpec(t *testing.T) {
	s := Release().For(outbox.System{})
	var na []string
	for _, c := range s.NotApplicable() {
		require.NotEmpty(t, c.NotApplicable)
		require.Empty(t, c.Dropped)
		name := c.Scenario.Name
		if c.Finding != "" {
			name = "regression/" + c.Finding
		}
		na = append(na, name)
	}
	require.ElementsMatch(t, []string{"regression/429-leaves-key-reserved",
		"regression/crashed-reservation-never-reclaimed", "regression/retry-in-another-encoding-refused", "tenants", "idempotency-reservation", "admission-crash",
		"run-admission-contract", "lock-renewals", "ambiguous-publish-no-dedup"}, na)
	require.Empty(t, caseNamed(t, s, "skewed-grace").NotApplicable, "the outbox declares a pick grace window")
	require.Contains(t, caseNamed(t, s, "tenants").NotApplicable, "tenant caps")
	require.Contains(t, caseNamed(t, s, "lock-renewals").NotApplicable, "a job lock")
	require.Contains(t, caseNamed(t, s, "ambiguous-publish-no-dedup").NotApplicable, "at-least-once")

	rollback := caseNamed(t, s, "dispatch-rollback")
	require.Equal(t, []string{"PublishFailsClean", "DispatchedWriteFails", "DispatchedWriteReplyLost", "RunningWriteFails"},
		kindNames(rollback.Scenario.DeclaredFaults()))
	require.Len(t, rollback.Dropped, 2)
	require.NotContains(t, kindNames(caseNamed(t, s, "lock-expiry").Scenario.DeclaredFaults()), "ReplicaPauseBeyondLockTTL")
	require.Equal(t, []string{"store_loss_touched"}, caseNamed(t, s, "store-failover").Sometimes)

	// Its consumer is its own half of the promise: a world that turns the
	// workers' de-duplication off keeps it.
	w, _ := rollback.Scenario.world(1000)
	require.False(t, w.NoWorkerDedup)
	cw, _ := Release().Cases[len(regressions)].Scenario.world(1000)
	require.True(t, cw.NoWorkerDedup, "Cordum's dispatch-rollback world keeps no de-duplication at the worker")
}

// A spec without a job lock gets no lock kinds and no lock expectations,
// and a case whose point is the lock does not apply.
func TestSpecWithoutLockGetsNoLockKindsOrExpectations(t *testing.T) {
	sys := respec{System: cordum.System{}, name: "nolock", edit: withoutLock}
	s := Release().For(sys)
	require.NotEmpty(t, caseNamed(t, s, "lock-renewals").NotApplicable)
	for _, c := range s.Cases {
		if c.NotApplicable != "" {
			continue
		}
		for _, k := range c.Scenario.DeclaredFaults() {
			require.NotEqual(t, "a job lock", k.Needs(), "%s declares %s", c.Scenario.Name, k.Name)
		}
		require.NotContains(t, c.Sometimes, "lock_fenced", c.Scenario.Name)
	}
	require.Contains(t, caseNamed(t, s, "lock-expiry").Dropped,
		"fault kind ReplicaPauseBeyondLockTTL: the system has no job lock")
	for _, c := range Exploratory().For(sys).Cases {
		require.NotContains(t, c.Sometimes, "lock_fenced")
		require.Contains(t, c.Dropped, "sometimes lock_fenced: the system has no job lock")
	}
}

// The newcomer's release: kinds aimed at points it lacks are not declared,
// the expectations it cannot reach are dropped with why, and a per-write
// crash kind fires as often as it would against Cordum.
func TestNewcomerReleaseFitsItsSpec(t *testing.T) {
	sys := respec{System: cordum.System{}, name: "newcomer", edit: newcomer}
	s := Release().For(sys)
	require.NotEmpty(t, caseNamed(t, s, "tenants").NotApplicable)
	for _, c := range s.Cases {
		if c.NotApplicable != "" {
			continue
		}
		for _, k := range c.Scenario.DeclaredFaults() {
			require.NotContains(t, []string{"RunningWriteFails", "CancelWriteFails", "LockRenewalFails",
				"ReplicaPauseBeyondLockTTL"}, k.Name, c.Scenario.Name)
		}
	}
	cancels := caseNamed(t, s, "cancels")
	require.Equal(t, []string{"StoreReplyLostAfterApply"}, kindNames(cancels.Scenario.DeclaredFaults()))
	require.Equal(t, []string{"fault kind CancelWriteFails: the system has no cancels written by a replica"}, cancels.Dropped)

	lockExpiry := caseNamed(t, s, "lock-expiry")
	o := lockExpiry.Scenario.FaultOptions(5000)
	require.InDelta(t, 0.05, o.Kinds["ReplicaCrashAfterApply"].Probability, 1e-12, "0.01 x 10 / 2")
	require.InDelta(t, 0.05, o.Kinds["ReplicaCrash"].Probability, 1e-12)
	require.InDelta(t, 0.01, o.Kinds["ReplicaPauseBeyondLockTTL"].Probability, 1e-12, "not a per-write kind")

	spec := sys.Spec(sut.Options{})
	require.NotEmpty(t, SometimesNotApplicable("dlq_invalid_request", spec))
	require.NotEmpty(t, SometimesNotApplicable("dlq_tenant_limit", spec))
	require.Empty(t, SometimesNotApplicable("dlq_no_pool_mapping_topic", spec))
	require.Empty(t, SometimesNotApplicable("redelivery_of_terminal", spec))
	require.NotEmpty(t, SometimesNotApplicable("no_such_branch", spec))
}

// A system that fails a job without a route at once (no grace) is judged on
// that choice: the cases whose point is a window for a late mapping do not
// apply, the one whose point is a missing mapping's reason code does.
func TestFailFastRoutingIsNotHeldToAGrace(t *testing.T) {
	sys := respec{System: cordum.System{}, name: "fail-fast", edit: func(s *sut.Spec) {
		s.PickGrace, s.NoRouteFailsAtOnce = 0, true
	}}
	s := Release().For(sys)
	require.Contains(t, caseNamed(t, s, "no-pool-mapping-race").NotApplicable, "a wait for a route")
	require.Contains(t, caseNamed(t, s, "skewed-grace").NotApplicable, "a pick grace window")
	require.Empty(t, caseNamed(t, s, "no-pool-mapping-static").NotApplicable)
	require.Empty(t, caseNamed(t, Release().For(cordum.System{}), "no-pool-mapping-race").NotApplicable)
}

// A system whose workers pull their dispatches is not held to cases about a
// dispatch published twice, and its replicas are crashed before a publish
// only if they announce something.
func TestPullingWorkersAreNotHeldToBusDispatches(t *testing.T) {
	pulling := func(dlq string) respec {
		return respec{System: cordum.System{}, name: "pulling", edit: func(s *sut.Spec) { s.WorkersPull, s.DLQSubject = true, dlq }}
	}
	s := Release().For(pulling(""))
	require.Contains(t, caseNamed(t, s, "ambiguous-publish-no-dedup").NotApplicable, "dispatches published over the bus")
	require.Contains(t, caseNamed(t, s, "worker-failures").Dropped,
		"fault kind ReplicaCrashBeforePublish: the system has no replicas that publish (dispatches, or DLQ announcements)")
	require.Empty(t, caseNamed(t, Release().For(pulling("sys.job.dlq")), "worker-failures").Dropped)
	require.Empty(t, caseNamed(t, Release().For(cordum.System{}), "ambiguous-publish-no-dedup").NotApplicable)
}

// A case that cannot apply runs no seed and says why; it is neither a pass
// nor a fail.
func TestNotApplicableCaseCarriesItsReason(t *testing.T) {
	c := caseNamed(t, Release().For(outbox.System{}), "tenants")
	rep := RunCase(c, func(*Outcome) { t.Fatal("a case that does not apply ran a seed") })
	require.Equal(t, "not applicable", rep.Verdict())
	require.False(t, rep.Passed())
	require.Zero(t, rep.Seeds)
	require.Contains(t, rep.NotApplicable, "tenant caps")
	require.Contains(t, rep.Notes()[0], "not applicable")
}

// On a part of a case's range, a sometimes-expectation never reached is
// advice, not a failure; over the case as declared it fails.
func TestPartialCaseOnlyAdvises(t *testing.T) {
	sc, _ := Lookup("swarm")
	rep := RunCase(Case{Scenario: sc, Seeds: []uint64{9000}, Sometimes: []string{"no_such_branch"}, Partial: true}, nil)
	require.True(t, rep.Passed(), rep.Describe())
	require.Equal(t, []string{SometimesNeverReached("no_such_branch")}, rep.Advisory)
}

// Only the same message stored again, for a generation run at most once, is
// what an at-least-once promise allows.
func TestAllowedByPromiseIsNarrow(t *testing.T) {
	pub := func(step uint64, job, msg string, gen int) history.PublishRecord {
		return history.PublishRecord{Step: step, JobID: job, Gen: gen, MsgID: msg, Dispatch: true, Outcome: history.PublishStored}
	}
	h := &history.History{Publishes: []history.PublishRecord{
		pub(10, "again", "jobreq:again", 0), pub(11, "again", "jobreq:again", 0),
		pub(20, "twice", "jobreq:twice", 0), pub(21, "twice", "jobreq:twice", 0),
		pub(30, "newid", "jobreq:newid", 0), pub(31, "newid", "other:newid", 0),
		pub(40, "unopened", "jobreq:unopened:1", 1),
	}, Executions: []history.Execution{
		{JobID: "again", DispatchID: "d1"},
		{JobID: "twice", DispatchID: "d2"}, {JobID: "twice", DispatchID: "d2"},
	}}
	v := func(job string, step uint64) checker.Violation {
		return checker.Violation{Layer: checker.LayerInvariants, Checker: "exactly_once_publish", Job: job, Step: step}
	}
	r := &checker.Result{Violations: []checker.Violation{v("again", 11), v("twice", 21), v("newid", 31), v("unopened", 40),
		{Layer: checker.LayerInvariants, Checker: "exactly_once_execution", Job: "twice", Step: 22}}}
	allowed := allowedByPromise(h, r)
	require.Equal(t, []checker.Violation{v("again", 11)}, allowed)
	require.Len(t, r.Violations, 4)
	require.False(t, slices.ContainsFunc(r.Violations, func(x checker.Violation) bool { return x.Job == "again" }))
}

// The outbox's whole release suite passes, with its expected findings shown
// and its cases that do not apply listed.
func TestOutboxRelease(t *testing.T) {
	longtest.Require(t, "the outbox's release suite, about 300 seeds")
	if testing.Short() {
		t.Skip("the release suite runs in full mode")
	}
	expected := 0
	for _, c := range Release().For(outbox.System{}).Cases {
		name := c.Scenario.Name
		if c.Finding != "" {
			name = "regression/" + c.Finding
		}
		t.Run(name, func(t *testing.T) {
			rep := RunCase(c, nil)
			for _, n := range rep.Notes() {
				t.Log(n)
			}
			for _, n := range rep.Expected {
				expected += n
			}
			if rep.NotApplicable != "" {
				t.Skip(rep.NotApplicable)
			}
			if !rep.Passed() {
				t.Errorf("%s", rep.Describe())
			}
		})
	}
	require.Positive(t, expected, "the outbox's relay re-publishes: some seed shows it as an expected finding")
}
