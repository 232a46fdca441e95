package checker

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// lockEvent records a command on job j1's lock under tok.
func (s *story) lockEvent(actor string, op sut.LockOp, held, failed bool) *story {
	s.tick()
	ev := history.LockEvent{Step: s.step, Time: s.at(), Actor: actor, JobID: "j1", Token: "tok", Op: op, Held: held,
		SentStep: s.step - 1, Failed: failed}
	if failed && op == sut.LockRenew && !held {
		s.h.LockFailures = append(s.h.LockFailures, ev) // never applied
		return s
	}
	s.h.Locks = append(s.h.Locks, ev)
	return s
}

// The lock-fenced counter counts the sections that gave their lock up: at
// least those whose background renewal found the lock gone while they ran,
// at most those plus the ones whose renewals failed three times in a row.
func TestLockFencedCounterAgainstTheRenewals(t *testing.T) {
	const section, renewer = "replica-1/sys.job.submit#1.1", "replica-1/timer#1"
	judge := func(s *story, fenced float64) []Violation {
		s.h.End = s.at() + time.Second
		return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
			Metrics: []prometheus.Gatherer{counterAt("scheduler_lock_fenced_total", "replica", "r1", fenced)}}), "metrics")
	}
	taken := func() *story {
		return newStory().submit("j1").commit("j1", engine.StatePending).lockEvent(section, sut.LockTake, true, false)
	}

	renewed := taken().lockEvent(renewer, sut.LockRenew, true, false).lockEvent(section, sut.LockRelease, false, false)
	require.Empty(t, judge(renewed, 0))
	v := judge(renewed, 1)
	require.Len(t, v, 1, "a renewal that held gives no reason to give the lock up")
	require.Contains(t, v[0].Message, "scheduler_lock_fenced_total=1 but between 0 and 0")

	lost := taken().lockEvent(renewer, sut.LockRenew, false, false).lockEvent(section, sut.LockRelease, false, false)
	require.Empty(t, judge(lost, 1))
	require.Len(t, judge(lost, 0), 1, "the section ran on after its renewal found the lock gone")

	// The section had issued its release before the renewal landed: it had
	// ended, and nothing was given up.
	ended := taken().lockEvent(section, sut.LockRelease, false, false)
	ended.lockEvent(renewer, sut.LockRenew, false, false)
	ended.h.Locks[len(ended.h.Locks)-1].SentStep = 1
	require.Empty(t, judge(ended, 0))
	require.Empty(t, judge(ended, 1))

	// A renewal by the section itself (its check before a publish) is not
	// the background renewal that gives the lock up.
	own := taken().lockEvent(section, sut.LockRenew, false, false)
	require.Empty(t, judge(own, 0))
	require.Len(t, judge(own, 1), 1)

	twice := taken().lockEvent(renewer, sut.LockRenew, false, true).lockEvent(renewer, sut.LockRenew, true, true)
	require.Len(t, judge(twice, 1), 1, "two failed renewals are one short of giving up")
	thrice := taken().lockEvent(renewer, sut.LockRenew, false, true).lockEvent(renewer, sut.LockRenew, true, true).
		lockEvent(renewer, sut.LockRenew, false, true)
	require.Empty(t, judge(thrice, 1))
	require.Len(t, judge(thrice, 0), 1, "the third failure in a row ends a section that never released")
}

// A section's lease does not run out while it runs, unless a fault on its
// renewals or its replica explains it.
func TestLeaseLapsingUnderALiveSectionIsCaught(t *testing.T) {
	const section, renewer = "replica-1/sys.job.submit#1.1", "replica-1/timer#1"
	// The section takes the lock for 3s; renewals at 1s and 2s extend it;
	// it releases at 5s.
	run := func(renewals ...time.Duration) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending)
		at := s.at()
		event := func(actor string, op sut.LockOp, off time.Duration) {
			s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.tick(), Time: at + off, Actor: actor, JobID: "j1",
				Token: "tok", Op: op, Held: op != sut.LockRelease, Until: at + off + 3*time.Second,
				Sent: at + off, SentStep: s.step})
		}
		event(section, sut.LockTake, 0)
		for _, r := range renewals {
			event(renewer, sut.LockRenew, r)
		}
		event(section, sut.LockRelease, 5*time.Second)
		return s
	}
	require.Empty(t, only(run(time.Second, 2*time.Second, 3*time.Second, 4*time.Second).check(), "lock_renewed"))

	v := only(run(time.Second).check(), "lock_renewed")
	require.Len(t, v, 1, "renewed once, the lease ran out 4s after the take with the section running until 5s")
	require.Contains(t, v[0].Message, "lock at 2s; its lease ran out at 6s")

	require.Len(t, only(run().check(), "lock_renewed"), 1, "never renewed")

	paused := run(time.Second)
	paused.h.Faults = append(paused.h.Faults, history.FaultRecord{Step: 3, Time: paused.h.Locks[0].Time + 2*time.Second,
		Actor: "replica-1/sys.job.submit#1.1", Effect: history.EffectPause})
	require.Empty(t, only(paused.check(), "lock_renewed"), "the replica paused: its timers stood still")

	failed := run(time.Second)
	failed.h.LockFailures = append(failed.h.LockFailures, history.LockEvent{Step: 4, Time: failed.h.Locks[0].Time + 2*time.Second,
		Actor: renewer, JobID: "j1", Token: "tok", Op: sut.LockRenew, Failed: true})
	require.Empty(t, only(failed.check(), "lock_renewed"), "a renewal failed")

	// The lease ran out at 6s (taken at 2s). A renewal failing at that very
	// moment explains it; a pause explains it only if it is the section's
	// replica's, between the take and the lapse.
	atLapse := run(time.Second)
	atLapse.h.LockFailures = append(atLapse.h.LockFailures, history.LockEvent{Step: 4, Time: 6 * time.Second,
		Actor: renewer, JobID: "j1", Token: "tok", Op: sut.LockRenew, Failed: true})
	require.Empty(t, only(atLapse.check(), "lock_renewed"), "a renewal failed as the lease ran out")
	for why, f := range map[string]history.FaultRecord{
		"another replica paused":             {Step: 3, Time: 4 * time.Second, Actor: "replica-2/sys.job.submit#1.1"},
		"the replica paused before taking":   {Step: 1, Time: time.Second, Actor: section},
		"the replica paused after the lapse": {Step: 5, Time: 7 * time.Second, Actor: section},
	} {
		s := run(time.Second)
		f.Effect = history.EffectPause
		s.h.Faults = append(s.h.Faults, f)
		require.Len(t, only(s.check(), "lock_renewed"), 1, why)
	}
}

// A handler publishes only after its own last check of the lock held it.
func TestPublishAfterAFailedLockCheckIsCaught(t *testing.T) {
	const h, dup = "replica-1/sys.job.submit#4.1", "replica-1/sys.job.submit#4.1"
	dispatched := func(check sut.LockOp, held, failed bool) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).lockEvent(h, sut.LockTake, true, false).
			commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched)
		s.h.States[len(s.h.States)-1].Actor, s.h.States[len(s.h.States)-1].Token = h, "tok"
		s.lockEvent(h, check, held, failed)
		s.publish("j1", 0, history.PublishStored)
		s.h.Publishes[len(s.h.Publishes)-1].Actor = h
		return s
	}
	require.Empty(t, only(dispatched(sut.LockRenew, true, false).check(), "lock_checked_before_publish"))
	require.Empty(t, only(dispatched(sut.LockTake, true, false).check(), "lock_checked_before_publish"), "a retake that held")

	v := only(dispatched(sut.LockRenew, false, false).check(), "lock_checked_before_publish")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "last renew of the lock (step 6, token tok) found it held by another or by no one")
	require.Len(t, only(dispatched(sut.LockTake, false, false).check(), "lock_checked_before_publish"), 1, "a failed retake")
	v = only(dispatched(sut.LockRenew, false, true).check(), "lock_checked_before_publish")
	require.Len(t, v, 1, "a check that failed")
	require.Contains(t, v[0].Message, "failed as it saw it")

	// A duplicated delivery runs a second handler under the same name; its
	// failed take is under a token of its own.
	other := dispatched(sut.LockRenew, true, false)
	other.h.Locks = append(other.h.Locks, history.LockEvent{Step: other.h.Publishes[0].Step - 1, Actor: dup, JobID: "j1",
		Token: "other", Op: sut.LockTake})
	require.Empty(t, only(other.check(), "lock_checked_before_publish"))
}

// leaseCmd is one command on job j1's lock under tok, at off after the take,
// holding the lock until untilOff after the take (0: held by no one).
type leaseCmd struct {
	actor         string
	op            sut.LockOp
	off, untilOff time.Duration
	held          bool
}

// leaseRun records the commands in step order after j1 is PENDING; the
// take is the first.
func leaseRun(cmds ...leaseCmd) *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending)
	at := s.at()
	for _, c := range cmds {
		ev := history.LockEvent{Step: s.tick(), Time: at + c.off, Actor: c.actor, JobID: "j1", Token: "tok", Op: c.op,
			Held: c.held, Sent: at + c.off, SentStep: s.step}
		if c.held {
			ev.Until = at + c.untilOff
		}
		s.h.Locks = append(s.h.Locks, ev)
	}
	return s
}

// The lease at its bounds: a renewal landing the instant the lease would run
// out keeps it, a lease that runs out the instant the release is issued did
// not run out under the section, and one renewed past the run's end while
// the section still runs never lapsed. A take that did not get the lock
// holds no lease, and a renewal that found the lock gone extends nothing,
// whatever it asked for.
func TestLeaseAtItsBounds(t *testing.T) {
	const section, renewer = "replica-1/sys.job.submit#1.1", "replica-1/timer#1"
	take := leaseCmd{actor: section, op: sut.LockTake, untilOff: 3 * time.Second, held: true}
	renew := func(off time.Duration, held bool) leaseCmd {
		return leaseCmd{actor: renewer, op: sut.LockRenew, off: off, untilOff: off + 3*time.Second, held: held}
	}
	release := func(off time.Duration) leaseCmd { return leaseCmd{actor: section, op: sut.LockRelease, off: off} }
	lapsed := func(s *story) []Violation { return only(s.check(), "lock_renewed") }

	require.Empty(t, lapsed(leaseRun(take, renew(3*time.Second, true), release(5*time.Second))),
		"renewed the instant the lease ended")
	require.Empty(t, lapsed(leaseRun(take, renew(2*time.Second, true), release(5*time.Second))),
		"the lease ran out as the release was issued")
	require.Len(t, lapsed(leaseRun(take, renew(2*time.Second, true), release(5*time.Second+time.Millisecond))), 1)
	require.Empty(t, lapsed(leaseRun(take, renew(time.Second, true), renew(2*time.Second, true))),
		"no release: renewed past the run's end")
	require.Empty(t, lapsed(leaseRun(leaseCmd{actor: section, op: sut.LockTake})), "a take that found the lock held")

	gone := leaseRun(take, renew(time.Second, false), release(5*time.Second))
	gone.h.Locks[1].Until = gone.h.Locks[0].Time + 10*time.Second
	require.Len(t, lapsed(gone), 1, "a renewal that did not hold extends nothing")

	// A system that does not renew its locks promises nothing of them.
	noRenewals := cordumSpec
	noRenewals.LockRenewFailures = 0
	require.Empty(t, only(leaseRun(take, release(5*time.Second)).checkSystem(noRenewals), "lock_renewed"))
}

// A pause of the section's replica excuses a lapse from the instant of the
// take to the instant the lease ran out, both included.
func TestAPauseAtTheLeasesEdgesExcusesItsLapse(t *testing.T) {
	const section = "replica-1/sys.job.submit#1.1"
	take := leaseCmd{actor: section, op: sut.LockTake, untilOff: 3 * time.Second, held: true}
	for why, off := range map[string][2]time.Duration{"at the take": {0, -time.Millisecond},
		"as the lease ran out": {3 * time.Second, time.Millisecond}} {
		s := leaseRun(take, leaseCmd{actor: section, op: sut.LockRelease, off: 5 * time.Second})
		at := s.h.Locks[0].Time
		s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: 3, Time: at + off[0], Actor: section, Effect: history.EffectPause})
		require.Empty(t, only(s.check(), "lock_renewed"), why)
		s.h.Faults[0].Time += off[1]
		require.Len(t, only(s.check(), "lock_renewed"), 1, why+", but a hair outside")
	}
}

// The publisher's check is its own last command under its own section's
// token before the publish: what happens to the job's lock afterwards, or
// another handler's DISPATCHED write after the publish, neither hides a
// failed check nor fails a good one, and neither does another handler's
// move of the job between the check and the publish.
func TestTheLockCheckIsTheSectionsLastBeforeThePublish(t *testing.T) {
	const h = "replica-1/sys.job.submit#4.1"
	dispatched := func(held bool) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).lockEvent(h, sut.LockTake, true, false).
			commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).by(h, "tok")
		s.lockEvent(h, sut.LockRenew, held, false).publish("j1", 0, history.PublishStored)
		s.h.Publishes[len(s.h.Publishes)-1].Actor = h
		return s
	}
	checked := func(s *story) []Violation { return only(s.check(), "lock_checked_before_publish") }

	// After a good check and the publish, a take under another token by a
	// handler of the same name finds the lock held.
	good := dispatched(true)
	good.lockEvent(h, sut.LockTake, false, false)
	good.h.Locks[len(good.h.Locks)-1].Token = "other"
	require.Empty(t, checked(good))

	// After a failed check and the publish, another handler dispatches the
	// job under a token of its own.
	bad := dispatched(false)
	bad.commit("j1", engine.StateScheduled).by("replica-2/h", "t2").commit("j1", engine.StateDispatched).by("replica-2/h", "t2")
	require.Len(t, checked(bad), 1)

	// Between the failed check and the publish, another replica's handler
	// moves the job under its own token: the check is still the publisher's.
	raced := newStory().submit("j1").commit("j1", engine.StatePending).lockEvent(h, sut.LockTake, true, false).
		commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).by(h, "tok")
	raced.lockEvent(h, sut.LockRenew, false, false).commit("j1", engine.StateScheduled).by("replica-2/h", "t2").
		publish("j1", 0, history.PublishStored)
	raced.h.Publishes[len(raced.h.Publishes)-1].Actor = h
	require.Len(t, checked(raced), 1)
}

// A replica killed whole (an operator's kill, recorded under the replica's
// name, not a section's) explains a lapse of any of its sections' leases
// between the take and the lapse, as a section cut off mid-publish never
// renews or releases again; a kill of another replica, or one outside that
// span, does not.
func TestAKillOfTheSectionsReplicaExcusesItsLapse(t *testing.T) {
	const section = "replica-1/sys.job.submit#1.1"
	take := leaseCmd{actor: section, op: sut.LockTake, untilOff: 3 * time.Second, held: true}
	for why, kill := range map[string]struct {
		replica string
		off     time.Duration
		excused bool
	}{
		"its replica killed while it held the lock": {"replica-1", time.Second, true},
		"another replica killed":                    {"replica-2", time.Second, false},
		"its replica killed before the take":        {"replica-1", -time.Second, false},
		"its replica killed after the lapse":        {"replica-1", 4 * time.Second, false},
	} {
		s := leaseRun(take)
		s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: 3, Time: s.h.Locks[0].Time + kill.off, Actor: kill.replica,
			Kind: "Event:kill", Effect: history.EffectCrash})
		s.step += 10 // the run ends long after the lapse, with no release
		if kill.excused {
			require.Empty(t, only(s.check(), "lock_renewed"), why)
		} else {
			require.Len(t, only(s.check(), "lock_renewed"), 1, why)
		}
	}
}
