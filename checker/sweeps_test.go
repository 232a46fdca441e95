package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// scan records actor listing the jobs of state.
func (s *story) scan(actor string, state engine.JobState) *story {
	s.tick()
	s.h.Scans = append(s.h.Scans, history.Scan{Step: s.step, Time: s.at(), Actor: actor, State: string(state)})
	return s
}

// settle records a handler's decision on a cancel of job.
func (s *story) settleCancel(actor, job string, outcome history.SettleOutcome) *story {
	s.tick()
	s.h.Settles = append(s.h.Settles, history.Settle{Step: s.step, Time: s.at(), Actor: actor, Subject: engine.SubjectCancel,
		MsgID: "cancel:" + job, JobID: job, Cancel: true, Outcome: outcome})
	return s
}

// The reconciler may take the lock of a job DISPATCHED for its dispatch
// timeout (300s by default) when it scanned it, and of no fresher one.
func TestSweepTakingAFreshJobsLockIsCaught(t *testing.T) {
	dispatched := func(untouched time.Duration) *story {
		return newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
			commit("j1", engine.StateDispatched).wait(untouched).scan("replica-1/reconciler", engine.StateDispatched).
			take("replica-1/reconciler", "j1", "tok", time.Minute)
	}
	require.Empty(t, only(dispatched(5*time.Minute).check(), "sweep_takes_stale"), "stale for the whole timeout")

	v := only(dispatched(time.Minute).check(), "sweep_takes_stale")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "untouched for 1m")
	require.Contains(t, v[0].Message, "stale after 5m0s")

	// A handler's take is no sweep's, whatever the job's age.
	handler := newStory().submit("j1").commit("j1", engine.StatePending).take("replica-1/sys.job.submit#1.1", "j1", "tok", time.Minute)
	require.Empty(t, only(handler.check(), "sweep_takes_stale"))

	// The scan that listed the job is the sweep's last one: a job that was
	// in another state then was not listed by it.
	moved := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		wait(2*time.Minute).scan("replica-1/replayer", engine.StateScheduled).commit("j1", engine.StateDispatched).
		scan("replica-1/replayer", engine.StateRetrying).take("replica-1/replayer", "j1", "tok", time.Minute)
	v = only(moved.check(), "sweep_takes_stale")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "the job was DISPATCHED, not RETRYING")

	// The replayer's staleness is its own (60s), not a timeout.
	replayed := newStory().submit("j1").commit("j1", engine.StatePending).wait(61*time.Second).
		scan("replica-2/replayer", engine.StatePending).take("replica-2/replayer", "j1", "tok", time.Minute)
	require.Empty(t, only(replayed.check(), "sweep_takes_stale"))
	early := newStory().submit("j1").commit("j1", engine.StatePending).wait(30*time.Second).
		scan("replica-2/replayer", engine.StatePending).take("replica-2/replayer", "j1", "tok", time.Minute)
	require.Len(t, only(early.check(), "sweep_takes_stale"), 1)

	// Clock skew between the writer and the scanner widens the bound, only
	// for a system that declares it measures on its replicas' clocks.
	early.h.ReplicaSkew = []time.Duration{0, 31 * time.Second}
	require.Len(t, only(early.check(), "sweep_takes_stale"), 1, "on the store's clock skew excuses nothing")
	replicaClocks := cordumSpec
	replicaClocks.Clocks = sut.ReplicaClocks
	require.Empty(t, only(early.checkSystem(replicaClocks), "sweep_takes_stale"))
}

// A cancel is acked once the job is terminal; acked (or dropped) while the
// job is still in flight it is lost.
func TestCancelAckedBeforeTheJobEndedIsCaught(t *testing.T) {
	cancelled := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateCancelled).
		settleCancel("replica-1/sys.job.cancel#2.1", "j1", history.SettleAck)
	require.Empty(t, only(cancelled.check(), "cancel_applied"))

	finished := newStory().dispatch("j1").settleCancel("replica-1/sys.job.cancel#2.1", "j1", history.SettleAck)
	require.Empty(t, only(finished.check(), "cancel_applied"), "a cancel of a finished job has nothing left to do")

	retried := newStory().submit("j1").commit("j1", engine.StatePending).
		settleCancel("replica-1/sys.job.cancel#2.1", "j1", history.SettleNak)
	require.Empty(t, only(retried.check(), "cancel_applied"), "a NAK keeps the cancel")

	lost := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		settleCancel("replica-1/sys.job.cancel#2.1", "j1", history.SettleAck)
	v := only(lost.check(), "cancel_applied")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "while the job was SCHEDULED")

	dropped := newStory().settleCancel("replica-1/sys.job.cancel#2.1", "j2", history.SettleDrop)
	v = only(dropped.check(), "cancel_applied")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "no record of the job")
}

// A dispatch a handler wrote and heard land is published by it, or one of
// the withheld counters says why not.
func TestWithheldCountersAgainstUnpublishedDispatches(t *testing.T) {
	const h = "replica-1/sys.job.submit#1.1"
	written := func() *story {
		s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
			commit("j1", engine.StateDispatched)
		for i := range s.h.States {
			s.h.States[i].Actor = h
		}
		return s
	}
	judge := func(s *story, n float64) []Violation {
		return metricFindings(s, counterAt("scheduler_republish_withheld_total", "topic", "default", n), "withheld counters")
	}
	parked := written()
	require.Empty(t, judge(parked, 1))
	v := judge(parked, 0)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "1 dispatches were written, heard to land, and never published by their writer")

	published := written().publish("j1", 0, history.PublishFailedClean)
	published.h.Publishes[0].Actor = h
	require.Empty(t, judge(published, 0), "a publish that failed was still attempted")
	v = judge(published, 1)
	require.Len(t, v, 1, "nothing was held back")
	require.Contains(t, v[0].Message, "the withheld counters (scheduler_publish_withheld_total, scheduler_republish_withheld_total, "+
		"scheduler_unknown_write_total) say 1, but at most 0 dispatches")
	// Only a replica's store write of the job that failed before it applied
	// may have been a DISPATCHED write: a gateway's, or a replica's delayed
	// publish, leaves the bound where it was.
	others := written().publish("j1", 0, history.PublishFailedClean)
	others.h.Publishes[0].Actor = h
	others.h.Faults = append(others.h.Faults,
		history.FaultRecord{Step: others.tick(), Actor: "gateway/run-0-0", Point: history.PointRedis,
			Effect: history.EffectFailBeforeApply, Target: "evalsha 9ef4b8d2 job:j1"},
		history.FaultRecord{Step: others.tick(), Actor: h, Point: history.PointPublish, Effect: history.EffectDelay,
			Target: "worker.w1.jobs j1"})
	require.Len(t, judge(others, 1), 1)

	failedWrite := written().publish("j1", 0, history.PublishFailedClean)
	failedWrite.h.Publishes[0].Actor = h
	failedWrite.h.Faults = append(failedWrite.h.Faults, history.FaultRecord{Step: failedWrite.tick(), Actor: h,
		Point: history.PointRedis, Effect: history.EffectFailBeforeApply, Target: "evalsha 9ef4b8d2 job:j1"})
	require.Empty(t, judge(failedWrite, 1), "a write of the job failed before it applied: it may have been a DISPATCHED write")

	lost := written()
	end := lost.h.States[len(lost.h.States)-1]
	lost.h.Faults = append(lost.h.Faults, history.FaultRecord{Step: end.Step, Time: end.Time, Actor: h,
		Effect: history.EffectReplyLostAfterApply})
	require.Empty(t, judge(lost, 0), "the writer never heard its write land")

	crashed := written()
	crashed.h.Faults = append(crashed.h.Faults, history.FaultRecord{Step: crashed.tick(), Time: crashed.at(),
		Actor: "replica-1", Effect: history.EffectCrash})
	require.Empty(t, judge(crashed, 0), "the writer died before its publish")
}

// A request acked by a handler that found its job running under the lock and
// wrote nothing was skipped, and the counter says so.
func TestRedeliverySkippedCounterAgainstTheHandlers(t *testing.T) {
	const h = "replica-2/sys.job.submit#7.2"
	redelivered := func(take bool) *story {
		s := newStory().dispatch("j1")
		if take {
			s.tick()
			s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.step, Time: s.at(), Actor: h, JobID: "j1", Token: "t2",
				Op: sut.LockTake, Held: true})
		}
		s.h.Settles = append(s.h.Settles, history.Settle{Step: s.tick(), Time: s.at(), Actor: h, Subject: engine.SubjectSubmit,
			JobID: "j1", Outcome: history.SettleAck})
		return s
	}
	judge := func(s *story, n float64) []Violation {
		return metricFindings(s, counterAt("scheduler_redelivery_skipped_total", "state", "RUNNING", n), "redelivery_skipped")
	}
	require.Empty(t, judge(redelivered(true), 1))
	v := judge(redelivered(true), 0)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "scheduler_redelivery_skipped_total=0 but 1 requests were acked")
	require.Empty(t, judge(redelivered(false), 0), "a handler that never held the lock is not judged")
}

// counterAt is a registry holding one counter's series label=value at n.
func counterAt(name, label, value string, n float64) prometheus.Gatherer {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name}, []string{label})
	c.WithLabelValues(value).Add(n)
	reg.MustRegister(c)
	return reg
}

// metricFindings checks the story with counters g and keeps the metrics
// findings that mention about (a story trips the other counters too).
func metricFindings(s *story, g prometheus.Gatherer, about string) []Violation {
	return metricFindingsOf(s, cordumSpec, g, about)
}

// metricFindingsOf is metricFindings for a system of spec sys.
func metricFindingsOf(s *story, sys sut.Spec, g prometheus.Gatherer, about string) []Violation {
	s.h.End = s.at() + time.Second
	var out []Violation
	for _, v := range only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: sys,
		Metrics: []prometheus.Gatherer{g}}), "metrics") {
		if strings.Contains(v.Message, about) {
			out = append(out, v)
		}
	}
	return out
}

// A system is held only to the counters its spec declares, and only where
// they mean what the checks read: no withheld counters, or dispatches
// published by a relay rather than their writer, and the withheld check has
// nothing to count; without a job lock no handler skips a redelivery under it.
func TestCountersJudgedOnlyWhereTheSpecDeclaresThem(t *testing.T) {
	const h = "replica-1/sys.job.submit#1.1"
	parked := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched)
	for i := range parked.h.States {
		parked.h.States[i].Actor = h
	}
	judge := metricFindingsOf
	none := counterAt("scheduler_republish_withheld_total", "topic", "default", 0)
	require.Len(t, judge(parked, cordumSpec, none, "withheld counters"), 1, "the parked dispatch is unaccounted for")
	undeclared := cordumSpec
	undeclared.Metrics.Withheld = nil
	require.Empty(t, judge(parked, undeclared, none, "withheld counters"))
	relayed := cordumSpec
	relayed.PublishFromRelay = true
	require.Empty(t, judge(parked, relayed, none, "withheld counters"))

	redelivered := newStory().dispatch("j1")
	redelivered.tick()
	redelivered.h.Locks = append(redelivered.h.Locks, history.LockEvent{Step: redelivered.step, Time: redelivered.at(),
		Actor: h, JobID: "j1", Token: "t2", Op: sut.LockTake, Held: true})
	redelivered.h.Settles = append(redelivered.h.Settles, history.Settle{Step: redelivered.tick(), Time: redelivered.at(),
		Actor: h, Subject: engine.SubjectSubmit, JobID: "j1", Outcome: history.SettleAck})
	skipped := counterAt("scheduler_redelivery_skipped_total", "state", "RUNNING", 0)
	require.Len(t, judge(redelivered, cordumSpec, skipped, "redelivery_skipped"), 1)
	unlocked := cordumSpec
	unlocked.JobLock = false
	require.Empty(t, judge(redelivered, unlocked, skipped, "redelivery_skipped"))
}

// The dispatch counters match the broker exactly: rollbacks count the
// dispatch publishes that failed, published ones those it stored.
func TestDispatchCountersAgainstTheBroker(t *testing.T) {
	s := newStory().dispatch("j1")
	findings := func(rollbacks, published float64) []string {
		var out []string
		for _, v := range metricFindings(s, counters(rollbacks, 0, published), "") {
			out = append(out, v.Message)
		}
		return out
	}
	require.Empty(t, findings(0, 1))
	require.Equal(t, []string{"scheduler_dispatch_rollback_total=1 but 0 dispatch publishes failed"}, findings(1, 1))
	require.Equal(t, []string{"scheduler_dispatch_published_total=2 but the broker acknowledged 1 dispatches"}, findings(0, 2))
}

// The skipped-redelivery counter must count at least the requests acked by
// a handler that took the job's lock once, held it, found the job
// dispatched, running or done, and wrote nothing before its ack. Every
// other shape may or may not have been a skip, and owes the counter nothing.
func TestSkippedRedeliveriesAreTheHandlersThatFoundNothingToDo(t *testing.T) {
	const h = "replica-2/sys.job.submit#7.2"
	type lock struct {
		actor, job, token string
		op                sut.LockOp
		held, afterAck    bool
	}
	take := lock{actor: h, job: "j1", token: "t2", op: sut.LockTake, held: true}
	build := func(scheduledOnly, wrote bool, outcome history.SettleOutcome, locks ...lock) *story {
		s := newStory()
		if scheduledOnly {
			s.submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled)
		} else {
			s.dispatch("j1")
		}
		addLock := func(l lock) {
			s.h.Locks = append(s.h.Locks, history.LockEvent{Step: s.tick(), Time: s.at(), Actor: l.actor, JobID: l.job,
				Token: l.token, Op: l.op, Held: l.held})
		}
		for _, l := range locks {
			if !l.afterAck {
				addLock(l)
			}
		}
		if wrote {
			s.commit("j1", engine.StateSucceeded)
			s.h.States[len(s.h.States)-1].Actor = h
		}
		s.h.Settles = append(s.h.Settles, history.Settle{Step: s.tick(), Time: s.at(), Actor: h, Subject: engine.SubjectSubmit,
			JobID: "j1", Outcome: outcome})
		for _, l := range locks {
			if l.afterAck {
				addLock(l)
			}
		}
		return s
	}
	owed := func(s *story) bool {
		return len(metricFindings(s, counterAt("scheduler_redelivery_skipped_total", "state", "RUNNING", 0), "redelivery_skipped")) == 1
	}
	with := func(change func(l *lock)) lock {
		l := take
		change(&l)
		return l
	}
	require.True(t, owed(build(false, false, history.SettleAck, take)), "found the job done and acked")
	require.True(t, owed(build(false, false, history.SettleAck, take, with(func(l *lock) { l.actor = "replica-1/h" }))),
		"another handler's take changes nothing")
	require.True(t, owed(build(false, false, history.SettleAck, take, take)), "a retake under its own token is one section")
	for why, s := range map[string]*story{
		"another actor's take":        build(false, false, history.SettleAck, with(func(l *lock) { l.actor = "replica-1/h" })),
		"a take of another job":       build(false, false, history.SettleAck, with(func(l *lock) { l.job = "j2" })),
		"a take that did not hold":    build(false, false, history.SettleAck, with(func(l *lock) { l.held = false })),
		"a renewal, not a take":       build(false, false, history.SettleAck, with(func(l *lock) { l.op = sut.LockRenew })),
		"the take after the ack":      build(false, false, history.SettleAck, with(func(l *lock) { l.afterAck = true })),
		"two handlers under one name": build(false, false, history.SettleAck, take, with(func(l *lock) { l.token = "t3" })),
		"the job was only scheduled":  build(true, false, history.SettleAck, take),
		"the handler wrote":           build(false, true, history.SettleAck, take),
		"the request was nakked":      build(false, false, history.SettleNak, take),
	} {
		require.False(t, owed(s), why)
	}
}
