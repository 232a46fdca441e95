package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// capped1 is the engine's promise with tenant "acme" capped at one job in flight.
var capped1 = cordum.System{}.Spec(sut.Options{TenantMaxActive: map[string]int{"acme": 1}})

// ofTenant sets the tenant of a submitted job.
func (s *story) ofTenant(job, tenant string) *story {
	for i := range s.h.Submitted {
		if s.h.Submitted[i].JobID == job {
			s.h.Submitted[i].Tenant = tenant
		}
	}
	return s
}

// by says who made the last commit: its actor, and the lock token it was
// fenced with (held by that token when it landed).
func (s *story) by(actor, token string) *story {
	last := &s.h.States[len(s.h.States)-1]
	last.Actor, last.Token, last.Holder = actor, token, token
	return s
}

// twoOfATenant runs j1 and j2 of one tenant to SUCCEEDED: j2's scheduling
// pass starts while j1 runs; j1 ends before j2's dispatch when ends is set,
// after it otherwise.
func twoOfATenant(tenant string, ends bool) *story {
	s := newStory().submit("j1").submit("j2").ofTenant("j1", tenant).ofTenant("j2", tenant)
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		publish("j1", 0, history.PublishStored).commit("j1", engine.StateRunning).execute("j1", 0, "d-j1")
	s.commit("j2", engine.StatePending).commit("j2", engine.StateScheduled)
	if ends {
		s.commit("j1", engine.StateSucceeded)
	}
	s.commit("j2", engine.StateDispatched).publish("j2", 0, history.PublishStored).commit("j2", engine.StateRunning).
		execute("j2", 0, "d-j2")
	if !ends {
		s.commit("j1", engine.StateSucceeded)
	}
	return s.commit("j2", engine.StateSucceeded)
}

// A dispatch whose whole pick window had the tenant at its cap is caught;
// one whose window saw a slot free up is not, and neither is a tenant
// without a cap.
func TestDispatchOverTheTenantCapIsCaught(t *testing.T) {
	require.Empty(t, twoOfATenant("acme", true).checkSystem(capped1).Violations, "j1 ended inside j2's pick window")
	require.Empty(t, twoOfATenant("other", false).checkSystem(capped1).Violations, "no cap")
	require.Empty(t, twoOfATenant("acme", false).checkSystem(cordumSpec).Violations, "a world without caps")

	v := only(twoOfATenant("acme", false).checkSystem(capped1), "tenant_cap")
	require.Len(t, v, 1)
	require.Equal(t, "j2", v[0].Job)
	require.Contains(t, v[0].Message, `tenant "acme" (cap 1) had 1 or more jobs DISPATCHED or RUNNING`)
	require.Contains(t, v[0].Message, "from the scheduling pass at step 10 (10s) to the dispatch; fewest at step 10: j1")

	loose := capped1
	loose.TenantMaxActive = map[string]int{"acme": sut.NoTenantCap}
	require.Empty(t, twoOfATenant("acme", false).checkSystem(loose).Violations, "a replica without the cap may dispatch it")
}

// Two replicas race: j1's dispatch lands inside j2's pick window, after
// j2's pass began with the tenant under its cap. Each pick may have read
// the count before the other's dispatch: not a finding.
func TestTenantCapRaceBetweenPicksPasses(t *testing.T) {
	s := newStory().submit("j1").submit("j2").ofTenant("j1", "acme").ofTenant("j2", "acme")
	s.commit("j1", engine.StatePending).commit("j2", engine.StatePending).
		commit("j1", engine.StateScheduled).by("replica-1/h", "t1").commit("j2", engine.StateScheduled).by("replica-2/h", "t2").
		commit("j1", engine.StateDispatched).by("replica-1/h", "t1").commit("j2", engine.StateDispatched).by("replica-2/h", "t2")
	require.Empty(t, only(s.checkSystem(capped1), "tenant_cap"))

	// The same dispatch by a handler whose pass was another's is not a pick
	// the checker can place: a job parked after a rollback is not judged.
	s = newStory().submit("j1").submit("j2").ofTenant("j1", "acme").ofTenant("j2", "acme")
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).by("replica-1/h", "t1").
		commit("j2", engine.StateDispatched).by("replica-1/h", "t1").
		commit("j2", engine.StateScheduled).by("replica-1/h", "t1").
		commit("j2", engine.StateDispatched).by("replica-2/h", "t2")
	v := only(s.checkSystem(capped1), "tenant_cap")
	require.Len(t, v, 1, "the first dispatch is a pass's, the parked one after the rollback is not judged")
	require.Equal(t, uint64(8), v[0].Step)
}

// tenantLimited fails j2 of tenant with the tenant-limit reason after a
// scheduling pass that j1, of the same tenant, runs through, or not when
// idle is set (j1 ended before j2 was scheduled).
func tenantLimited(tenant string, idle bool) *story {
	s := newStory().submit("j1").submit("j2").ofTenant("j1", tenant).ofTenant("j2", tenant)
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		publish("j1", 0, history.PublishStored).commit("j1", engine.StateRunning).execute("j1", 0, "d-j1")
	if idle {
		s.commit("j1", engine.StateSucceeded)
	}
	s.commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).wait(time.Minute).commit("j2", engine.StateFailed)
	s.dead("j2", dlqEntry(engine.StateFailed, engine.StateScheduled, engine.ReasonTenantLimit))
	if !idle {
		s.commit("j1", engine.StateSucceeded)
	}
	return s
}

// The tenant-limit reason needs a capped tenant that reached its cap while
// the job waited to be placed.
func TestTenantLimitReasonAgainstTheTrueCause(t *testing.T) {
	require.Empty(t, tenantLimited("acme", false).checkSystem(capped1).Violations, "the legal shape")

	v := only(tenantLimited("other", false).checkSystem(capped1), "dlq_true_cause")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `reason tenant_limit for a job of tenant "other", which has no cap (caps: acme:1)`)

	v = only(tenantLimited("acme", true).checkSystem(capped1), "dlq_true_cause")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `tenant "acme" (cap 1) had at most 0 jobs DISPATCHED or RUNNING from the job's first scheduling`)
}

// A dispatch is judged against the tenant's cap only as the end of its own
// handler's scheduling pass: the move into the scheduled state right before
// it by the same actor under the same lock token, and not a rollback. Over
// the cap, that dispatch is a finding; the same dispatch after another
// handler's pass (another actor, or a second handler under the same actor
// name with its own token) or after its own rollback is not placed.
func TestTenantCapJudgesADispatchOnlyAfterItsOwnPass(t *testing.T) {
	overCap := func(dispatcher, token string, rollback bool) []Violation {
		s := newStory().submit("j1").submit("j2").ofTenant("j1", "acme").ofTenant("j2", "acme")
		s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
			commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).by("replica-1/h", "t1")
		if rollback {
			s.commit("j2", engine.StateDispatched).by("replica-1/h", "t1").commit("j2", engine.StateScheduled).by("replica-1/h", "t1")
		}
		s.commit("j2", engine.StateDispatched).by(dispatcher, token)
		var late []Violation
		for _, v := range only(s.checkSystem(capped1), "tenant_cap") {
			if v.Step == s.step {
				late = append(late, v)
			}
		}
		return late
	}
	require.Len(t, overCap("replica-1/h", "t1", false), 1, "its own pass, with the tenant at its cap throughout")
	require.Empty(t, overCap("replica-1/h", "t9", false), "a second handler under the same name")
	require.Empty(t, overCap("replica-2/h", "t1", false), "another actor")
	require.Empty(t, overCap("replica-1/h", "t1", true), "after its own rollback")
}

// sameStep makes the last commit land in the step of the one before it:
// one command that moved two jobs.
func (s *story) sameStep() *story {
	n := len(s.h.States)
	s.h.States[n-1].Step, s.h.States[n-1].Time = s.h.States[n-2].Step, s.h.States[n-2].Time
	s.step--
	return s
}

// The tenant's count is taken after each step's commits: a step in which
// one of its jobs ends and another is dispatched never shows a free slot.
// The fewest is the first moment of the window that had it, and a job whose
// dispatch is its first commit was picked by no pass the checker can place.
func TestTenantCountIsTakenAfterAWholeStep(t *testing.T) {
	s := newStory().submit("j1").submit("j2").submit("j3").ofTenant("j1", "acme").ofTenant("j2", "acme").ofTenant("j3", "acme")
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).by("replica-1/h", "t1")
	pass := s.step
	s.commit("j1", engine.StateRunning)
	s.commit("j1", engine.StateSucceeded).commit("j3", engine.StateDispatched).sameStep()
	s.commit("j2", engine.StateDispatched).by("replica-1/h", "t1")
	v := only(s.checkSystem(capped1), "tenant_cap")
	require.Len(t, v, 1, "j3's dispatch took the slot j1's end freed in the same step")
	require.Equal(t, "j2", v[0].Job)
	require.Contains(t, v[0].Message, fmt.Sprintf("fewest at step %d: j1", pass))
}

// The tenant-limit reason is justified by the cap reached at any moment
// from the job's first scheduling to its failure, not after it: a job
// scheduled while its tenant was idle may fail for a cap reached since,
// but not for one reached only by the failure's own step.
func TestTenantLimitReachedAfterTheFirstScheduling(t *testing.T) {
	build := func(sameStep bool) *story {
		s := newStory().submit("j1").submit("j2").ofTenant("j1", "acme").ofTenant("j2", "acme")
		s.commit("j2", engine.StatePending).commit("j2", engine.StateScheduled).commit("j1", engine.StatePending).
			commit("j1", engine.StateScheduled)
		if !sameStep {
			s.commit("j1", engine.StateDispatched)
		}
		s.wait(time.Minute).commit("j2", engine.StateFailed)
		if sameStep {
			s.commit("j1", engine.StateDispatched).sameStep()
		}
		s.dead("j2", dlqEntry(engine.StateFailed, engine.StateScheduled, engine.ReasonTenantLimit))
		return s
	}
	require.Empty(t, only(build(false).checkSystem(capped1), "dlq_true_cause"), "j1 took the slot while j2 waited")
	v := only(build(true).checkSystem(capped1), "dlq_true_cause")
	require.Len(t, v, 1, "j1 took the slot only in the failure's own step")
	require.Contains(t, v[0].Message, "had at most 0 jobs")
}

// A job without a tenant is no tenant's (the engine caps no job of no
// tenant), even in a spec whose caps have the empty name.
func TestAJobWithoutATenantIsNeverCapped(t *testing.T) {
	emptyName := capped1
	emptyName.TenantMaxActive = map[string]int{"": 1}
	require.Empty(t, only(twoOfATenant("", false).checkSystem(emptyName), "tenant_cap"))
}

// A tenant without a cap on some replica (caps that differ across a rolling
// deploy) is held to no count: its tenant-limit reason is not judged.
func TestTenantLimitReasonWhereSomeReplicaHasNoCap(t *testing.T) {
	loose := capped1
	loose.TenantMaxActive = map[string]int{"acme": sut.NoTenantCap}
	require.Empty(t, only(tenantLimited("acme", true).checkSystem(loose), "dlq_true_cause"))
}
