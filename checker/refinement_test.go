package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// only is the violations of one guard.
func only(r *Result, name string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Checker == name {
			out = append(out, v)
		}
	}
	return out
}

func (s *story) checkSystem(sys sut.Spec) *Result {
	s.h.End = s.at() + time.Second
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: sys})
}

// A SUCCEEDED record pointing at a result no worker reported.
func TestRecordWithoutTheReportedResultIsCaught(t *testing.T) {
	s := newStory().dispatch("j1")
	require.Empty(t, s.check().Violations, "the legal shape")

	s.setFinal("j1", func(f *sut.JobFact) { f.ResultPtr = "mem://j1/stale" })
	v := only(s.check(), "record_matches_result")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `record result_ptr="mem://j1/stale"`)
	require.Contains(t, v[0].Message, `w1 gen=0 succeeded "mem://j1"`)
}

// A worker's failure report does not justify a SUCCEEDED record.
func TestRecordFromAFailureReportIsCaught(t *testing.T) {
	s := newStory().dispatch("j1")
	s.h.Reports[0].Outcome = string(sut.Failed)
	require.Len(t, only(s.check(), "record_matches_result"), 1)
}

func TestDLQEntryOfTheWrongStatusIsCaught(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).wait(5*time.Minute).commit("j1", engine.StateTimeout)
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
	require.Empty(t, s.check().Violations, "the legal shape")

	s.dead("j1", dlqEntry(engine.StateFailed, engine.StateDispatched, engine.ReasonDispatchTimeout))
	require.Len(t, only(s.check(), "dlq_entry"), 1)
	delete(s.dlq, "j1")
	require.Contains(t, only(s.check(), "dlq_entry")[0].Message, "no DLQ entry")
}

// routed builds a job on topic that fails after the grace window with code.
func routed(routing sut.Routing, requires []string, code engine.ReasonCode) *story {
	s := newStory().submit("j1")
	s.h.Submitted[0].Requires = requires
	s.h.Routing = []history.RoutingChange{{Routing: routing}}
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).wait(time.Minute).commit("j1", engine.StateFailed)
	s.dead("j1", dlqEntry(engine.StateFailed, engine.StateScheduled, code))
	return s
}

var (
	generalOnly = sut.Routing{Topics: map[string][]string{"default": {"general"}}, Pools: map[string][]string{"general": nil}}
	noTopics    = sut.Routing{Topics: map[string][]string{}, Pools: map[string][]string{"general": nil}}
)

// A job whose topic is mapped but whose requires no pool offers is not a
// missing topic, and a topic with no pool is not an unsatisfied requires.
func TestDLQReasonAgainstTheTrueCause(t *testing.T) {
	gpu := []string{"gpu"}
	require.Empty(t, routed(generalOnly, gpu, engine.ReasonNoPoolMappingRequires).check().Violations)
	require.Empty(t, routed(noTopics, nil, engine.ReasonNoPoolMappingTopic).check().Violations)

	v := only(routed(generalOnly, gpu, engine.ReasonNoPoolMappingTopic).check(), "dlq_true_cause")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "true cause at 3s: no_pool_mapping_requires")
	require.Len(t, only(routed(noTopics, gpu, engine.ReasonNoPoolMappingRequires).check(), "dlq_true_cause"), 1)
	require.Len(t, only(routed(generalOnly, nil, engine.ReasonNoPoolMappingTopic).check(), "dlq_true_cause"), 1,
		"a pool was eligible: neither routing code is true")

	// A rollout between the pick and the failure justifies either routing.
	s := routed(noTopics, nil, engine.ReasonNoPoolMappingTopic)
	s.h.Routing = append(s.h.Routing, history.RoutingChange{Time: 30 * time.Second, Routing: generalOnly})
	require.Empty(t, s.check().Violations)
}

func timedOut(after time.Duration) *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).wait(after).commit("j1", engine.StateTimeout)
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
	return s
}

// A dispatch timeout 100s into a 300s timeout fired early in true time.
// Skewed replica clocks and a delayed entering write excuse it only for a
// system that declares it measures on its replicas' clocks: one measuring on
// the store's has no such excuse.
func TestTimeoutBeforeItsTimeIsCaught(t *testing.T) {
	require.Empty(t, timedOut(5*time.Minute).check().Violations)

	v := only(timedOut(100*time.Second).check(), "timeout_not_early")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "timeout 5m0s, tolerance 1ms")

	replicaClocks := cordumSpec
	replicaClocks.Clocks = sut.ReplicaClocks
	skewed := timedOut(100 * time.Second)
	skewed.h.ReplicaSkew = []time.Duration{-2 * time.Minute, 0, 90 * time.Second}
	v = only(skewed.check(), "timeout_not_early")
	require.Len(t, v, 1, "on the store's clock a clock spread excuses nothing")
	require.Contains(t, v[0].Message, "tolerance 1ms")
	require.Empty(t, skewed.checkSystem(replicaClocks).Violations, "a 3m30s clock spread covers a replica-clock system")

	delayed := timedOut(100 * time.Second)
	delayed.h.States[2].Sent = delayed.h.States[2].Time - 4*time.Minute
	require.Len(t, only(delayed.check(), "timeout_not_early"), 1, "the store stamps the write when it lands")
	require.Empty(t, delayed.checkSystem(replicaClocks).Violations, "the writer read its clock 4m before the write landed")
}

func TestGraceWindowFailureBeforeTheWindowIsCaught(t *testing.T) {
	s := newStory().submit("j1")
	s.h.Routing = []history.RoutingChange{{Routing: noTopics}}
	s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).wait(10*time.Second).commit("j1", engine.StateFailed)
	s.dead("j1", dlqEntry(engine.StateFailed, engine.StateScheduled, engine.ReasonNoPoolMappingTopic))
	v := only(s.check(), "grace_not_early")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "grace 30s")

	// 25 s of skew between replicas excuses the early failure only for a
	// system that declares it measures the window on their clocks.
	s.h.ReplicaSkew = []time.Duration{-5 * time.Second, 20 * time.Second}
	require.Len(t, only(s.check(), "grace_not_early"), 1)
	replicaClocks := cordumSpec
	replicaClocks.Clocks = sut.ReplicaClocks
	require.Empty(t, only(s.checkSystem(replicaClocks), "grace_not_early"))

	require.Empty(t, routed(noTopics, nil, engine.ReasonNoPoolMappingTopic).check().Violations, "a minute is past the window")
}

func capped(attempts int) *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending)
	for range attempts {
		s.commit("j1", engine.StateScheduled).commit("j1", engine.StateRetrying)
	}
	s.commit("j1", engine.StateFailed)
	s.dead("j1", sut.DLQEntry{Status: string(engine.StateFailed), LastState: string(engine.StateRetrying),
		ReasonCode: string(engine.ReasonNoWorkers), RetriesExhausted: true})
	return s
}

func TestRetryCapFailureBeforeTheCapIsCaught(t *testing.T) {
	sys := cordumSpec
	sys.MaxSchedulingRetries = 3
	require.Empty(t, capped(3).checkSystem(sys).Violations)
	v := only(capped(2).checkSystem(sys), "retry_cap_not_early")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "after 2 attempts; cap 3")
}

// Seed 004's story: a job that succeeded is dispatched again under new
// message ids and runs again; the finding counts both.
func TestTerminalJobExecutedAgainIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").publishAs("j1", 0, "again-1", history.PublishStored).execute("j1", 0, "d-2").
		publishAs("j1", 0, "again-2", history.PublishStored).execute("j1", 0, "d-j1")
	v := only(s.check(), "terminal_job_executed_again")
	require.Len(t, v, 1, "one finding per job, not per copy")
	require.Contains(t, v[0].Message, "dispatched 2 more times and executed 1 more times",
		"d-j1 ran before the job ended: its repeat is the worker's, counted by exactly-once")

	require.Empty(t, only(newStory().dispatch("j1").check(), "terminal_job_executed_again"))
}

// take records actor taking job's lock under token for ttl.
func (s *story) take(actor, job, token string, ttl time.Duration) *story {
	s.tick()
	s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.step, Time: s.at(), Actor: actor, JobID: job, Token: token,
		Held: true, Until: s.at() + ttl})
	return s
}

// fenced makes the job's last state change a write by actor fenced with
// token, applied while holder held the lock.
func (s *story) fenced(actor, token, holder string) *story {
	st := &s.h.States[len(s.h.States)-1]
	st.Actor, st.Token, st.Holder = actor, token, holder
	return s
}

func TestWriteAfterTheLockExpiredIsCaught(t *testing.T) {
	legal := newStory().submit("j1").commit("j1", engine.StatePending).take("r1", "j1", "aaaa", time.Minute).
		commit("j1", engine.StateScheduled).fenced("r1", "aaaa", "aaaa")
	require.Empty(t, only(legal.check(), "fenced_write"))

	late := newStory().submit("j1").commit("j1", engine.StatePending).take("r1", "j1", "aaaa", time.Minute).
		wait(2*time.Minute).commit("j1", engine.StateScheduled).fenced("r1", "aaaa", "")
	v := only(late.check(), "fenced_write")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "fenced by token aaaa; the lock was held by no one")

	require.Empty(t, only(late.checkSystem(outboxLike()), "fenced_write"), "a system with no job lock promises no fence")
}

// outboxLike is the engine's spec without a job lock, DLQ announcements or
// load rules.
func outboxLike() sut.Spec {
	s := cordumSpec
	s.JobLock, s.DLQSubject, s.Overload = false, "", sut.Overload{}
	return s
}

// r1 takes the lock and pauses past its TTL; r2 takes it and writes; r1
// wakes and publishes, believing it still holds the lock.
func TestTwoHandlersInsideOneLockIsCaught(t *testing.T) {
	overlap := func(pause time.Duration) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).take("r1", "j1", "aaaa", 10*time.Second).
			commit("j1", engine.StateScheduled).fenced("r1", "aaaa", "aaaa").
			commit("j1", engine.StateDispatched).fenced("r1", "aaaa", "aaaa")
		s.wait(pause).take("r2", "j1", "bbbb", 10*time.Second).commit("j1", engine.StateScheduled).fenced("r2", "bbbb", "bbbb")
		s.publish("j1", 0, history.PublishStored)
		s.h.Publishes[len(s.h.Publishes)-1].Actor = "r1"
		return s
	}
	v := only(overlap(20*time.Second).check(), "lock_exclusive")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "r2 took it at")

	// r1 published inside its lease; r2 took the lock after.
	s := newStory().submit("j1").commit("j1", engine.StatePending).take("r1", "j1", "aaaa", 10*time.Second).
		commit("j1", engine.StateScheduled).fenced("r1", "aaaa", "aaaa").publish("j1", 0, history.PublishStored)
	s.h.Publishes[0].Actor = "r1"
	s.wait(20*time.Second).take("r2", "j1", "bbbb", 10*time.Second).commit("j1", engine.StateDispatched).fenced("r2", "bbbb", "bbbb")
	require.Empty(t, only(s.check(), "lock_exclusive"))
	require.Empty(t, only(overlap(20*time.Second).checkSystem(outboxLike()), "lock_exclusive"))
}

// World-swarm seed 1004032: replica-1 is paused (a GC pause) after its lock
// check and before its publish; the reconciler takes the lock and times the job
// out; replica-1 wakes and publishes. No store can fence the broker, so the
// late copy itself is excused only for that pause and only while no worker
// runs it: the worker's fence must refuse it.
func TestPausedPublishIsExcusedOnlyWhileTheWorkerRefusesIt(t *testing.T) {
	stale := func(pause bool) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).
			take("replica-1/h", "j1", "aaaa", 10*time.Second).
			commit("j1", engine.StateScheduled).fenced("replica-1/h", "aaaa", "aaaa").
			commit("j1", engine.StateDispatched).fenced("replica-1/h", "aaaa", "aaaa")
		if pause {
			s.tick()
			s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Actor: "replica-1/other",
				Kind: "ReplicaPauseBeyondLockTTL", Effect: history.EffectPause, Point: history.PointRedis})
		}
		s.wait(20*time.Second).take("replica-2/reconciler", "j1", "bbbb", 10*time.Second).
			commit("j1", engine.StateTimeout).fenced("replica-2/reconciler", "bbbb", "bbbb")
		// The handler's renewal timer wakes with it and finds the lock gone.
		s.tick()
		s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.step, Time: s.at(), Actor: "replica-1/timer#5",
			JobID: "j1", Token: "aaaa"})
		s.publish("j1", 0, history.PublishStored)
		s.h.Publishes[len(s.h.Publishes)-1].Actor = "replica-1/h"
		return s
	}
	guards := []string{"lock_exclusive", "terminal_job_executed_again"}
	for _, g := range guards {
		require.Empty(t, only(stale(true).check(), g), "paused, and the worker refused the copy")
		require.Len(t, only(stale(true).execute("j1", 0, "d-late").check(), g), 1, "paused, but the copy ran")
		require.Len(t, only(stale(false).check(), g), 1, "late with no pause to explain it")
	}
}

// The pause that excuses a late publish is its publisher's replica's, fired
// from its last take of the lock (a pause at the take's own command
// included) until that lease ended and before the publish; another
// replica's pause, another fault, or a pause outside that span excuses
// nothing. Another job's run after the copy does not count against it.
func TestOnlyThePublishersPauseInsideItsLeaseExcusesALatePublish(t *testing.T) {
	// Taken at 3s (step 3) for 10s; the reconciler takes over at 25s; the
	// publish comes after.
	late := func(pause history.FaultRecord) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).
			take("replica-1/h", "j1", "aaaa", 10*time.Second).
			commit("j1", engine.StateScheduled).fenced("replica-1/h", "aaaa", "aaaa").
			commit("j1", engine.StateDispatched).fenced("replica-1/h", "aaaa", "aaaa")
		s.wait(20*time.Second).take("replica-2/reconciler", "j1", "bbbb", 10*time.Second).
			commit("j1", engine.StateTimeout).fenced("replica-2/reconciler", "bbbb", "bbbb")
		s.publish("j1", 0, history.PublishStored)
		s.h.Publishes[len(s.h.Publishes)-1].Actor = "replica-1/h"
		if pause.Effect == "" {
			pause.Effect = history.EffectPause
		}
		if pause.Actor == "" {
			pause.Actor = "replica-1/other"
		}
		s.h.Faults = append(s.h.Faults, pause)
		return s
	}
	excused := func(s *story) bool { return len(only(s.check(), "lock_exclusive")) == 0 }
	require.True(t, excused(late(history.FaultRecord{Step: 4, Time: 4 * time.Second})))
	require.True(t, excused(late(history.FaultRecord{Step: 3, Time: 3 * time.Second})), "paused at its take's own command")
	require.True(t, excused(late(history.FaultRecord{Step: 4, Time: 13 * time.Second})), "paused as its lease ended")
	require.True(t, excused(late(history.FaultRecord{Step: 4, Time: 4 * time.Second}).execute("j2", 0, "d-j2")),
		"another job ran after the copy")
	for why, pause := range map[string]history.FaultRecord{
		"another replica paused":    {Step: 4, Time: 4 * time.Second, Actor: "replica-2/other"},
		"a delay, not a pause":      {Step: 4, Time: 4 * time.Second, Effect: history.EffectDelay},
		"paused before its take":    {Step: 2, Time: 2 * time.Second},
		"paused after its lease":    {Step: 4, Time: 14 * time.Second},
		"paused after it published": {Step: 40, Time: 40 * time.Second},
	} {
		require.False(t, excused(late(pause)), why)
	}
}

// A replica on its own config routes by its own routing: a topic-missing
// failure it files is true where its routing lacks the topic, whatever the
// others run with; the same code from a replica on the shared routing is not.
func TestDLQReasonAgainstTheActingReplicasRouting(t *testing.T) {
	byReplica := func(actor string) *story {
		s := routed(generalOnly, nil, engine.ReasonNoPoolMappingTopic)
		s.h.Routing = append(s.h.Routing, history.RoutingChange{Routing: noTopics, Replica: "replica-3"})
		for i := range s.h.States {
			s.h.States[i].Actor = actor + "/sys.job.submit#1.1"
		}
		return s
	}
	require.Empty(t, only(byReplica("replica-3").check(), "dlq_true_cause"))
	require.Len(t, only(byReplica("replica-1").check(), "dlq_true_cause"), 1)
}

// release records actor's command on job's lock under token that left the
// token without it (a release, or a renewal that found the lock gone).
func (s *story) release(actor, job, token string) *story {
	s.tick()
	s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.step, Time: s.at(), Actor: actor, JobID: job, Token: token})
	return s
}

// r1's lease ends by its release, by its expiry, or not at all: only the
// last is a lock freed under its holder (older Cordum's release without a
// token, run by a handler whose own lease had expired, deletes it).
func TestLockTakenUnderAnotherLeaseIsCaught(t *testing.T) {
	base := func() *story {
		return newStory().submit("j1").commit("j1", engine.StatePending).take("r1", "j1", "aaaa", time.Minute)
	}
	released := base().release("r1", "j1", "aaaa").take("r2", "j1", "bbbb", time.Minute)
	require.Empty(t, only(released.check(), "lock_exclusive"))
	expired := base().wait(time.Minute-time.Second).take("r2", "j1", "bbbb", time.Minute)
	require.Empty(t, only(expired.check(), "lock_exclusive"), "a take at the very expiry is legal: the store expired the key")
	early := base().wait(time.Minute-2*time.Second).take("r2", "j1", "bbbb", time.Minute)
	require.Len(t, only(early.check(), "lock_exclusive"), 1, "a second before the expiry the key was still there")
	renewed := base().take("r1", "j1", "aaaa", time.Minute).release("r1", "j1", "aaaa").take("r2", "j1", "bbbb", time.Minute)
	require.Empty(t, only(renewed.check(), "lock_exclusive"), "a renewal is not a second take")

	freed := base().release("r0", "j1", "zzzz").take("r2", "j1", "bbbb", time.Minute)
	v := only(freed.check(), "lock_exclusive")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "r2 took the lock at 5s (token bbbb) while the lease of token aaaa, taken by r1 at 3s, ran until 1m3s")
	require.Empty(t, only(freed.checkSystem(outboxLike()), "lock_exclusive"))
}

// failedByWorker runs j1 to a FAILED record left by a worker's failure
// report, which the record's result pointer is.
func failedByWorker(ptr string) *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishStored).execute("j1", 0, "d-j1")
	s.h.Reports = append(s.h.Reports, history.WorkerReport{Step: s.tick(), Time: s.at(), Worker: "w1", JobID: "j1",
		Outcome: string(sut.Failed), ResultPtr: "mem://j1/failed"})
	s.commit("j1", engine.StateFailed)
	s.setFinal("j1", func(f *sut.JobFact) { f.ResultPtr, f.Cause = ptr, string(engine.ReasonJobFailed) })
	return s.dead("j1", dlqEntry(engine.StateFailed, engine.StateDispatched, engine.ReasonJobFailed))
}

// A FAILED record that blames the worker carries the failure it reported.
func TestFailedRecordWithoutTheReportedFailureIsCaught(t *testing.T) {
	require.Empty(t, failedByWorker("mem://j1/failed").check().Violations)

	v := only(failedByWorker("mem://j1/other").check(), "record_matches_result")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `FAILED record result_ptr="mem://j1/other"; worker reports before the commit: w1 gen=0 failed "mem://j1/failed"`)

	s := failedByWorker("mem://j1/failed")
	s.h.Reports[0].Outcome = string(sut.Succeeded)
	require.Len(t, only(s.check(), "record_matches_result"), 1, "a success report does not justify a failure")
}

// Only a failure or a timeout leaves a DLQ entry.
func TestDLQEntryOfASucceededJobIsCaught(t *testing.T) {
	s := newStory().dispatch("j1").dead("j1", dlqEntry(engine.StateFailed, engine.StateRunning, engine.ReasonJobFailed))
	v := only(s.check(), "dlq_entry")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "ended SUCCEEDED, yet has a DLQ entry with status FAILED")
	require.Empty(t, only(failedByWorker("mem://j1/failed").check(), "dlq_entry"))
}

// A stored DLQ entry is announced by the handler that stored it, after it
// stored it, unless that handler's replica crashed in between.
func TestDLQAnnouncementAgainstTheStoredEntry(t *testing.T) {
	stored := func() *story {
		s := failedByWorker("mem://j1/failed")
		s.h.States[len(s.h.States)-1].Actor = "replica-1/sys.job.result#9.1"
		s.h.Publishes = s.h.Publishes[:len(s.h.Publishes)-1]
		return s
	}
	announce := func(s *story, actor string) *story {
		s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.tick(), Time: s.at(), Actor: actor,
			Subject: engine.SubjectDLQ, JobID: "j1", Outcome: history.PublishFailedClean})
		return s
	}
	require.Empty(t, announce(stored(), "replica-1/sys.job.result#9.1").check().Violations, "a failed announcement counts")

	v := only(stored().check(), "dlq_announced")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "replica-1/sys.job.result#9.1 stored job j1's DLQ entry (FAILED) and never announced it")

	crashed := stored()
	crashed.h.Faults = append(crashed.h.Faults, history.FaultRecord{Step: crashed.tick(), Time: crashed.at(),
		Actor: "replica-1/sys.job.cancel#3.1", Effect: history.EffectCrash})
	require.Empty(t, only(crashed.check(), "dlq_announced"), "the replica died before it could announce")

	// A graceful stop drains deliveries, not a sweep caught between the
	// entry and its announcement (world-swarm seed 6002206).
	stopped := stored()
	stopped.h.Faults = append(stopped.h.Faults, history.FaultRecord{Step: stopped.tick(), Time: stopped.at(),
		Actor: "replica-1", Kind: "Event:stop"})
	require.Empty(t, only(stopped.check(), "dlq_announced"), "the replica stopped before it could announce")

	lost := stored()
	end := lost.h.States[len(lost.h.States)-1]
	lost.h.Faults = append(lost.h.Faults, history.FaultRecord{Step: end.Step, Time: end.Time, Actor: end.Actor,
		Effect: history.EffectReplyLostAfterApply})
	require.Empty(t, only(lost.check(), "dlq_announced"), "the handler was told its write failed")

	early := newStory().submit("j1").commit("j1", engine.StatePending)
	early = announce(early, "replica-1/sys.job.result#9.1")
	early.commit("j1", engine.StateFailed).dead("j1", dlqEntry(engine.StateFailed, engine.StatePending, engine.ReasonJobFailed))
	v = only(early.check(), "dlq_announced")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "announced a DLQ entry of job j1 that the store did not hold")
	require.Empty(t, only(early.checkSystem(outboxLike()), "dlq_announced"))
}

// Only the writer's own fate excuses a missing announcement: its replica
// going down at the entry's write or after it (a crash right as the write
// applied included), or its own reply of that write lost. Another replica's
// crash, a fault of the writer that takes nothing down, or a lost reply of
// another write excuses nothing.
func TestDLQAnnouncementExcusedOnlyByTheWritersOwnFate(t *testing.T) {
	const writer = "replica-1/sys.job.result#9.1"
	withFault := func(f func(end history.StateChange) history.FaultRecord) []Violation {
		s := failedByWorker("mem://j1/failed")
		s.h.States[len(s.h.States)-1].Actor = writer
		s.h.Publishes = s.h.Publishes[:len(s.h.Publishes)-1]
		s.h.Faults = append(s.h.Faults, f(s.h.States[len(s.h.States)-1]))
		s.tick()
		return only(s.check(), "dlq_announced")
	}
	require.Empty(t, withFault(func(end history.StateChange) history.FaultRecord {
		return history.FaultRecord{Step: end.Step, Actor: writer, Effect: history.EffectCrashAfterApply}
	}), "the replica died as the entry's write applied")
	require.Len(t, withFault(func(end history.StateChange) history.FaultRecord {
		return history.FaultRecord{Step: end.Step + 1, Actor: "replica-2/sys.job.result#1.1", Effect: history.EffectCrash}
	}), 1, "another replica crashed")
	require.Len(t, withFault(func(end history.StateChange) history.FaultRecord {
		return history.FaultRecord{Step: end.Step + 1, Actor: writer, Point: history.PointPublish, Effect: history.EffectDelay}
	}), 1, "the writer's replica was slowed, not taken down")
	require.Len(t, withFault(func(end history.StateChange) history.FaultRecord {
		return history.FaultRecord{Step: end.Step - 1, Actor: writer, Effect: history.EffectReplyLostAfterApply}
	}), 1, "the writer lost the reply of an earlier write")
	require.Len(t, withFault(func(end history.StateChange) history.FaultRecord {
		return history.FaultRecord{Step: end.Step, Actor: "replica-2/sys.job.result#1.1", Effect: history.EffectReplyLostAfterApply}
	}), 1, "another handler lost a reply at that step")
}

// A topic's dispatch timeout replaces the global one, as a lower bound of
// the reconciler's TIMEOUT and as the bound of how long a job may sit
// dispatched.
func TestTopicDispatchTimeoutBoundsBothWays(t *testing.T) {
	sys := cordumSpec
	sys.DispatchTimeoutByTopic = map[string]time.Duration{"fast": 20 * time.Second}
	onTopic := func(topic string, s *story) *story {
		s.h.Submitted[0].Topic = topic
		return s
	}
	require.Empty(t, onTopic("fast", timedOut(30*time.Second)).checkSystem(sys).Violations)
	v := only(onTopic("default", timedOut(30*time.Second)).checkSystem(sys), "timeout_not_early")
	require.Len(t, v, 1, "the default topic keeps the global 5m")
	require.Contains(t, v[0].Message, "timeout 5m0s")
	require.Len(t, only(onTopic("fast", timedOut(15*time.Second)).checkSystem(sys), "timeout_not_early"), 1)

	stuck := onTopic("fast", timedOut(3*time.Minute))
	require.Len(t, only(stuck.checkSystem(sys), "dispatch_timeout"), 1, "20s plus two ticks passed long before")
	require.Empty(t, only(onTopic("default", timedOut(3*time.Minute)).checkSystem(sys), "dispatch_timeout"))
}

// A timeout's DLQ reason names the timeout of the state the job left.
func TestTimeoutReasonOfTheOtherStateIsCaught(t *testing.T) {
	require.Empty(t, timedOut(5*time.Minute).check().Violations)
	s := timedOut(5 * time.Minute)
	s.dlq["j1"] = dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonRunningTimeout)
	v := only(s.check(), "dlq_entry")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "timed out from DISPATCHED; DLQ reason running_timeout")
}

// With a cap of 3, three passes are the most; a rollback of the third pass
// counts a fourth attempt, and only that.
func TestSchedulingPassBeyondTheCapIsCaught(t *testing.T) {
	sys := cordumSpec
	sys.MaxSchedulingRetries = 3
	passes := func(n int) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending)
		for range n {
			s.commit("j1", engine.StateScheduled)
		}
		return s
	}
	require.Empty(t, only(passes(3).checkSystem(sys), "retry_cap_not_late"))
	rolledBack := passes(3).commit("j1", engine.StateDispatched).commit("j1", engine.StateScheduled)
	require.Empty(t, only(rolledBack.checkSystem(sys), "retry_cap_not_late"))

	v := only(passes(4).checkSystem(sys), "retry_cap_not_late")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "a scheduling pass from SCHEDULED after 3 attempts; cap 3")
	require.Len(t, only(rolledBack.commit("j1", engine.StateScheduled).checkSystem(sys), "retry_cap_not_late"), 1)
}

// In a timely world the upper bounds hold during the faults too: a job sits
// DISPATCHED no longer than its timeout and two ticks, and a job whose topic
// never had a pool fails once the grace window and a backoff have passed.
func TestTimelyWorldsHoldUpperBoundsFromTheStart(t *testing.T) {
	judge := func(s *story, timely bool, names ...string) []string {
		s.h.End = s.at() + time.Second
		s.h.FaultPhaseEnd = 10 * time.Minute
		r := Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec, Spec: Spec{Timely: timely}})
		var got []string
		for _, n := range names {
			for range only(r, n) {
				got = append(got, n)
			}
		}
		return got
	}
	late := timedOut(7 * time.Minute)
	require.Empty(t, judge(late, false, "dispatch_timeout"), "inside the fault phase a stalled reconciler is excused")
	require.Equal(t, []string{"dispatch_timeout"}, judge(timedOut(7*time.Minute), true, "dispatch_timeout"))
	require.Empty(t, judge(timedOut(5*time.Minute+30*time.Second), true, "dispatch_timeout"))

	orphan := func(failAfter time.Duration) *story {
		s := routed(noTopics, nil, engine.ReasonNoPoolMappingTopic)
		s.h.States[len(s.h.States)-1].Time = s.h.States[len(s.h.States)-2].Time + failAfter
		return s
	}
	require.Empty(t, judge(orphan(time.Minute), true, "grace_not_late"))
	require.Equal(t, []string{"grace_not_late"}, judge(orphan(20*time.Minute), true, "grace_not_late"))
	require.Empty(t, judge(orphan(20*time.Minute), false, "grace_not_late"), "faults may have held the retries up")
	mapped := orphan(20 * time.Minute)
	mapped.h.Routing = append(mapped.h.Routing, history.RoutingChange{Time: 10 * time.Second, Routing: generalOnly})
	require.Empty(t, judge(mapped, true, "grace_not_late"), "a mapping arrived: the cause healed")
}

// Outbox seed 5600's shape: a relay's publish of a live job is held in
// flight by a delay fault, the job is cancelled meanwhile, and the copy is
// stored after. A check before a publish cannot see that cancel; the copy is
// excused only while it never runs, only for the publish the fault delayed,
// and not without the fault.
func TestPublishHeldAcrossTheTerminalCommit(t *testing.T) {
	const name = "terminal_job_executed_again"
	build := func(delayed, ranAfter, otherPublishBetween bool) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
			commit("j1", engine.StateDispatched)
		if delayed {
			s.tick()
			s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Actor: "r1/relay", Kind: "PublishLatency",
				Effect: history.EffectDelay, Point: history.PointPublish, Target: "worker.w1.jobs j1"})
		}
		s.commit("j1", engine.StateCancelled)
		if otherPublishBetween {
			s.tick()
			s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Actor: "r1/relay",
				Subject: "worker.w1.jobs", MsgID: "jobreq:j2", JobID: "j2", Dispatch: true, Outcome: history.PublishStored})
		}
		s.tick()
		s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Actor: "r1/relay",
			Subject: "worker.w1.jobs", MsgID: "jobreq:j1", JobID: "j1", Dispatch: true, Outcome: history.PublishStored})
		if ranAfter {
			s.execute("j1", 0, "d-j1")
		}
		return s
	}
	require.Empty(t, only(build(true, false, false).check(), name), "held in flight, never run")
	require.Len(t, only(build(false, false, false).check(), name), 1, "no fault held it: published after the cancel")
	require.Len(t, only(build(true, true, false).check(), name), 1, "the stale copy ran")
	require.Len(t, only(build(true, false, true).check(), name), 1, "the fault delayed another publish of the relay")

	// Only a delay of the relay's own publishes holds a copy in flight; what
	// the relay published before it, or another job's run after it, changes
	// nothing.
	for why, change := range map[string]func(f *history.FaultRecord){
		"a delayed store command": func(f *history.FaultRecord) { f.Point = history.PointRedis },
		"another actor's delay":   func(f *history.FaultRecord) { f.Actor = "r2/relay" },
	} {
		s := build(true, false, false)
		change(&s.h.Faults[0])
		require.Len(t, only(s.check(), name), 1, why)
	}
	earlier := build(true, false, false)
	earlier.h.Publishes = append([]history.PublishRecord{{Step: 1, Actor: "r1/relay", Subject: "worker.w1.jobs",
		MsgID: "jobreq:j0", JobID: "j0", Dispatch: true, Outcome: history.PublishStored}}, earlier.h.Publishes...)
	require.Empty(t, only(earlier.check(), name), "a publish of the relay before the fault")
	otherRan := build(true, false, false).execute("j2", 0, "d-j2")
	require.Empty(t, only(otherRan.check(), name), "another job ran after the copy was stored")
}

// A guard holds a system only to what its spec declares: a spec that
// declares nothing is held to the one guard every dispatcher owes, and
// each guard applies once the spec declares what it reads.
func TestGuardsApplyOnlyToWhatTheSpecDeclares(t *testing.T) {
	for _, g := range Guards {
		require.Equal(t, g.Name == "result_of_current_dispatch", g.Applies(sut.Spec{}), "%s on an empty spec", g.Name)
	}
	applies := func(name string, on CommitKind, s sut.Spec) bool {
		for _, g := range Guards {
			if g.Name == name && g.On == on {
				return g.Applies(s)
			}
		}
		panic("no guard " + name)
	}
	for _, s := range []sut.Spec{{ReasonTopicMissing: "t"}, {ReasonRequiresUnsatisfied: "r"}, {ReasonTenantLimit: "l"},
		{ReasonInvalidRequest: "i"}} {
		require.True(t, applies("dlq_true_cause", CommitDLQ, s), "any one reason code it judges: %+v", s)
	}
	capped := sut.Spec{TenantMaxActive: map[string]int{"acme": 1}}
	require.False(t, applies("tenant_cap", CommitState, capped), "a cap without the states that count as active")
	capped.TenantActive = []string{"RUNNING"}
	require.True(t, applies("tenant_cap", CommitState, capped))
	require.True(t, applies("grace_not_early", CommitDLQ, sut.Spec{PickGrace: time.Second}))
	require.True(t, applies("retry_cap_not_early", CommitDLQ, sut.Spec{MaxSchedulingRetries: 1}))
	require.True(t, applies("retry_cap_not_late", CommitState, sut.Spec{MaxSchedulingRetries: 1}))
	require.True(t, applies("sweep_takes_stale", CommitLock, sut.Spec{Sweeps: cordumSpec.Sweeps}))
	require.True(t, applies("terminal_job_executed_again", CommitPublish, sut.Spec{Terminal: []string{"DONE"}}))
}

// The liveness deadlines hold up to and including their last moment: a job
// DISPATCHED for exactly its timeout and two ticks, or failed for a missing
// pool exactly the grace, a longest backoff and a busy lock's wait after its
// first scheduling, is on time. A dispatch_timeout names the step that ended
// the stay. grace_not_late judges only jobs that were scheduled, in systems
// with a grace window and a backoff cap.
func TestLivenessDeadlinesHoldToTheirLastMoment(t *testing.T) {
	judge := func(s *story, sys sut.Spec, name string) []Violation {
		s.h.End = s.at() + time.Second
		s.h.FaultPhaseEnd = 10 * time.Minute
		return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: sys, Spec: Spec{Timely: true}}), name)
	}
	// timedOut(d) writes TIMEOUT d and one step (1s) after DISPATCHED.
	stay := cordumSpec.DispatchTimeout + 2*cordumSpec.ReconcileInterval
	require.Empty(t, judge(timedOut(stay-time.Second), cordumSpec, "dispatch_timeout"))
	over := timedOut(stay)
	v := judge(over, cordumSpec, "dispatch_timeout")
	require.Len(t, v, 1)
	require.Equal(t, over.h.States[len(over.h.States)-1].Step, v[0].Step, "the TIMEOUT write ended the stay")

	orphan := func(failAfter time.Duration) *story {
		s := routed(noTopics, nil, engine.ReasonNoPoolMappingTopic)
		s.h.States[len(s.h.States)-1].Time = s.h.States[len(s.h.States)-2].Time + failAfter
		return s
	}
	deadline := cordumSpec.PickGrace + cordumSpec.BackoffMax + busyLockSlack
	require.Empty(t, judge(orphan(deadline), cordumSpec, "grace_not_late"))
	require.Len(t, judge(orphan(deadline+time.Second), cordumSpec, "grace_not_late"), 1)
	noCap := cordumSpec
	noCap.BackoffMax = 0
	require.Empty(t, judge(orphan(20*time.Minute), noCap, "grace_not_late"))

	unscheduled := newStory().submit("j1")
	unscheduled.h.Routing = []history.RoutingChange{{Routing: noTopics}}
	unscheduled.wait(20 * time.Minute)
	require.Empty(t, judge(unscheduled, cordumSpec, "grace_not_late"), "never scheduled: no grace began")
}

// TimeoutNeverPublished counts the jobs that timed out without the broker
// ever storing a dispatch of theirs, and no other.
func TestTimeoutNeverPublishedCountsTimeoutsOnly(t *testing.T) {
	s := timedOut(5 * time.Minute)
	s.submit("j2").commit("j2", engine.StatePending).commit("j2", engine.StateFailed)
	s.dead("j2", dlqEntry(engine.StateFailed, engine.StatePending, engine.ReasonNoPoolMappingTopic))
	s.dispatch("j3")
	require.Equal(t, 1, s.check().Figures.TimeoutNeverPublished)
}

// leaseHandover: replica-1/h takes j1's lock at 3s for 10s (until 13s) and
// dispatches it; at 13s, the instant that lease ends, replica-2/h takes the
// lock and schedules the job again under its own token. The caller adds
// replica-1/h's publish.
func leaseHandover() *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending).take("replica-1/h", "j1", "aaaa", 10*time.Second).
		commit("j1", engine.StateScheduled).fenced("replica-1/h", "aaaa", "aaaa").
		commit("j1", engine.StateDispatched).fenced("replica-1/h", "aaaa", "aaaa")
	s.wait(7*time.Second).take("replica-2/h", "j1", "bbbb", 10*time.Second).
		commit("j1", engine.StateScheduled).fenced("replica-2/h", "bbbb", "bbbb")
	return s
}

// publishBy adds a dispatch of j1 by actor at time at, with outcome.
func (s *story) publishBy(actor string, at time.Duration, outcome history.PublishOutcome) *story {
	s.publish("j1", 0, outcome)
	p := &s.h.Publishes[len(s.h.Publishes)-1]
	p.Actor, p.Time = actor, at
	return s
}

// A lease covers its last instant, and so does the take that follows it: a
// take exactly as the old lease ends is a take after it, so the old holder's
// publish after that instant overlaps the new holder, while its publish at
// that very instant is still inside its own lease. A publish the broker
// refused dispatched nothing and overlaps no one.
func TestLockExclusiveAtTheLeasesLastInstant(t *testing.T) {
	require.Equal(t, 13*time.Second, leaseHandover().h.Locks[1].Time, "taken again as the first lease ends")

	late := leaseHandover().publishBy("replica-1/h", 15*time.Second, history.PublishStored)
	v := only(late.check(), "lock_exclusive")
	require.Len(t, v, 1, "replica-2/h took the lock as the lease ended and acted before the publish")
	require.Contains(t, v[0].Message, "replica-2/h took it at 13s")

	atEnd := leaseHandover()
	atEnd.h.States[len(atEnd.h.States)-1].Time = 13 * time.Second
	atEnd.publishBy("replica-1/h", 13*time.Second, history.PublishStored)
	require.Empty(t, only(atEnd.check(), "lock_exclusive"), "published at its lease's last instant")

	refused := leaseHandover().publishBy("replica-1/h", 15*time.Second, history.PublishFailedClean)
	require.Empty(t, only(refused.check(), "lock_exclusive"), "the broker stored nothing")
}

// Exclusivity is between holders. A handler whose take the store refused
// holds nothing, so its write overlaps no lease (fenced_write judges the
// write); a take while the old lease still ran is one finding, at the take,
// not a second one at the old holder's late publish.
func TestLockExclusiveCountsOnlyTakesAfterTheLease(t *testing.T) {
	refusedTake := newStory().submit("j1").commit("j1", engine.StatePending).
		take("replica-1/h", "j1", "aaaa", 10*time.Second).
		commit("j1", engine.StateScheduled).fenced("replica-1/h", "aaaa", "aaaa").
		commit("j1", engine.StateDispatched).fenced("replica-1/h", "aaaa", "aaaa")
	refusedTake.wait(10*time.Second).take("replica-2/h", "j1", "bbbb", 10*time.Second)
	refusedTake.h.Locks[1].Held, refusedTake.h.Locks[1].Until = false, 0
	refusedTake.commit("j1", engine.StateScheduled).h.States[3].Actor = "replica-2/h"
	refusedTake.publishBy("replica-1/h", 20*time.Second, history.PublishStored)
	require.Empty(t, only(refusedTake.check(), "lock_exclusive"))

	early := newStory().submit("j1").commit("j1", engine.StatePending).
		take("replica-1/h", "j1", "aaaa", 10*time.Second).
		commit("j1", engine.StateScheduled).fenced("replica-1/h", "aaaa", "aaaa").
		take("replica-2/h", "j1", "bbbb", 10*time.Second).
		commit("j1", engine.StateDispatched).fenced("replica-2/h", "bbbb", "bbbb")
	early.wait(10*time.Second).publishBy("replica-1/h", 20*time.Second, history.PublishStored)
	v := only(early.check(), "lock_exclusive")
	require.Len(t, v, 1)
	require.Equal(t, early.h.Locks[1].Step, v[0].Step, "the take under a running lease")
}

// A job that ran before it ended and is dispatched once more after: the
// finding counts the late dispatch, and no run, since the run came first.
func TestTerminalRedispatchCountsOnlyLaterRuns(t *testing.T) {
	s := newStory().dispatch("j1").publishAs("j1", 0, "again-1", history.PublishStored)
	v := only(s.check(), "terminal_job_executed_again")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "dispatched 1 more times and executed 0 more times")
}

// A pause excuses only a publish made after its publisher's lease ran out.
// One stored at the lease's last instant was made while the publisher held
// the lock, so its check should have seen the job cancelled: a dispatch of
// a terminal job, pause or not.
func TestPauseExcusesNoPublishInsideTheLease(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).
		take("replica-1/h", "j1", "aaaa", 10*time.Second).
		commit("j1", engine.StateScheduled).fenced("replica-1/h", "aaaa", "aaaa").
		commit("j1", engine.StateDispatched).fenced("replica-1/h", "aaaa", "aaaa")
	s.tick()
	s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Actor: "replica-1/other",
		Kind: "ReplicaPauseBeyondLockTTL", Effect: history.EffectPause, Point: history.PointRedis})
	s.commit("j1", engine.StateCancelled)
	s.wait(5*time.Second).publishBy("replica-1/h", 13*time.Second, history.PublishStored)
	require.Equal(t, s.h.Locks[0].Until, s.h.Publishes[0].Time, "published as the lease ended")
	require.Len(t, only(s.check(), "terminal_job_executed_again"), 1)
}

// The timing bounds hold up to their tolerance and no further: a TIMEOUT
// or a grace-window failure exactly 1 ms short of its bound is on time (the
// 1 ms of timestamp truncation), a nanosecond earlier is early.
func TestTimingBoundsAtTheirTolerance(t *testing.T) {
	onTime := timedOut(5 * time.Minute)
	onTime.h.States[3].Time = onTime.h.States[2].Time + 5*time.Minute - time.Millisecond
	require.Empty(t, only(onTime.check(), "timeout_not_early"))
	onTime.h.States[3].Time--
	require.Len(t, only(onTime.check(), "timeout_not_early"), 1)

	grace := func(after time.Duration) *story {
		s := newStory().submit("j1")
		s.h.Routing = []history.RoutingChange{{Routing: noTopics}}
		s.commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).wait(10*time.Second).commit("j1", engine.StateFailed)
		s.h.States[2].Time = s.h.States[1].Time + after
		s.dead("j1", dlqEntry(engine.StateFailed, engine.StateScheduled, engine.ReasonNoPoolMappingTopic))
		return s
	}
	require.Empty(t, only(grace(30*time.Second-time.Millisecond).check(), "grace_not_early"), "grace 30s")
	v := only(grace(30*time.Second-time.Millisecond-1).check(), "grace_not_early")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "29.998999999s in true time")
}

// Only the record a job ends on is held to a worker's report and to its DLQ
// entry: a terminal write the store then forgot, followed by another end,
// left nothing behind. A record pointing at another job's result is no
// report of its own.
func TestOnlyTheRecordTheJobEndsOnIsJudged(t *testing.T) {
	again := newStory().dispatch("j1").lose("j1", engine.StateRunning).commit("j1", engine.StateSucceeded)
	again.h.Reports[len(again.h.Reports)-1].ResultPtr = "mem://j1-again"
	again.setFinal("j1", func(f *sut.JobFact) { f.ResultPtr = "mem://j1-again" })
	require.Empty(t, only(again.check(), "record_matches_result"))

	failedTwice := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateFailed).lose("j1", engine.StateScheduled).commit("j1", engine.StateRetrying).
		commit("j1", engine.StateFailed)
	failedTwice.dead("j1", dlqEntry(engine.StateFailed, engine.StateRetrying, engine.ReasonNoWorkers))
	require.Empty(t, only(failedTwice.check(), "dlq_entry"))

	borrowed := newStory().dispatch("j2").dispatch("j1")
	borrowed.setFinal("j1", func(f *sut.JobFact) { f.ResultPtr = "mem://j2" })
	v := only(borrowed.check(), "record_matches_result")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, `SUCCEEDED record result_ptr="mem://j2"`)
}

// A lease's finding names its take, not its latest renewal: r1 took at 3s
// and renewed at 4s; r2 took while that renewed lease ran.
func TestLeaseFindingNamesTheTakeNotTheRenewal(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).take("r1", "j1", "aaaa", time.Minute).
		take("r1", "j1", "aaaa", time.Minute).take("r2", "j1", "bbbb", time.Minute)
	v := only(s.check(), "lock_exclusive")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "the lease of token aaaa, taken by r1 at 3s, ran until 1m4s")
}

// Only the new holder's own acts before the old holder's late publish
// overlap it: another actor's write after the take, or the new holder's
// write after the publish, is no second handler inside the lock.
func TestLockExclusiveCountsOnlyTheNewHoldersActsBefore(t *testing.T) {
	s := leaseHandover()
	w := &s.h.States[len(s.h.States)-1]
	w.Actor, w.Token, w.Holder = "api", "", "" // the write after the take is not replica-2/h's
	s.publishBy("replica-1/h", 15*time.Second, history.PublishStored).
		commit("j1", engine.StateDispatched).fenced("replica-2/h", "bbbb", "bbbb")
	require.Empty(t, only(s.check(), "lock_exclusive"))
}

// What voids the excuse of a copy held across the terminal commit is a run
// of that copy: its generation, after it was stored. A run of the
// generation before the copy was stored, or a worker's repeat after it of
// another generation that ran before the job ended (exactly-once's), leaves
// the held copy unrun.
func TestHeldCopyVoidedOnlyByItsOwnRun(t *testing.T) {
	const name = "terminal_job_executed_again"
	held := func(before, after []history.Execution) *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
			commit("j1", engine.StateDispatched)
		for _, e := range before {
			s.execute("j1", e.Gen, e.DispatchID)
		}
		s.tick()
		s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Actor: "r1/relay", Kind: "PublishLatency",
			Effect: history.EffectDelay, Point: history.PointPublish, Target: "worker.w1.jobs j1"})
		s.commit("j1", engine.StateCancelled)
		s.tick()
		s.h.Publishes = append(s.h.Publishes, history.PublishRecord{Step: s.step, Time: s.at(), Actor: "r1/relay",
			Subject: "worker.w1.jobs", MsgID: "jobreq:j1", JobID: "j1", Dispatch: true, Outcome: history.PublishStored})
		for _, e := range after {
			s.execute("j1", e.Gen, e.DispatchID)
		}
		return s
	}
	gen0 := []history.Execution{{Gen: 0, DispatchID: "d0"}}
	gen1 := []history.Execution{{Gen: 1, DispatchID: "d1"}}
	require.Empty(t, only(held(gen0, nil).check(), name), "the generation ran before the copy was stored")
	require.Empty(t, only(held(gen1, gen1).check(), name), "a repeat of another generation's run")
	require.Len(t, only(held(nil, gen0).check(), name), 1, "the held copy ran")
}

// tenant_cap counts a tenant's jobs in the states the spec names active; a
// spec that names none declares nothing to count, so even a tenant capped
// at zero is not judged by it.
func TestTenantCapNeedsTheActiveStates(t *testing.T) {
	sys := cordumSpec
	sys.TenantMaxActive, sys.TenantActive = map[string]int{"acme": 0}, nil
	s := newStory().dispatch("j1").ofTenant("j1", "acme")
	require.Empty(t, only(s.checkSystem(sys), "tenant_cap"))

	sys.TenantActive = cordumSpec.TenantActive
	require.Len(t, only(newStory().dispatch("j1").ofTenant("j1", "acme").checkSystem(sys), "tenant_cap"), 1,
		"the same spec naming its active states holds the cap of zero")
}

// A history that begins with the job already DISPATCHED records no move
// into that state, so it gives no start to time the stay from: the guard
// does not time it from zero.
func TestTimeoutOfAStayWithNoRecordedStartIsNotJudged(t *testing.T) {
	s := newStory().submit("j1")
	s.last["j1"] = engine.StateDispatched
	s.commit("j1", engine.StateTimeout)
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
	require.Empty(t, only(s.check(), "timeout_not_early"))
}
