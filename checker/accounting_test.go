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

// The fenced-section counter is held to the sections that gave their lock
// up after failed renewals; a system that declares no such limit never gives
// a lock up that way, so whatever its counter says is not judged.
func TestLockFencedCounterOnlyWithARenewalLimit(t *testing.T) {
	fenced := func(renewFailures int) []Violation {
		s := newStory().dispatch("j1")
		s.h.End = s.at()
		reg := prometheus.NewRegistry()
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: cordumSpec.Metrics.LockFenced})
		c.Add(3)
		reg.MustRegister(c)
		sys := cordumSpec
		sys.LockRenewFailures = renewFailures
		return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: sys,
			Metrics: []prometheus.Gatherer{counters(0, 0, 1), reg}}), "metrics")
	}
	v := fenced(cordumSpec.LockRenewFailures)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "scheduler_lock_fenced_total=3 but between 0 and 0 sections")
	require.Empty(t, fenced(0))
}

// withheld is a registry whose publish-withheld counter says n.
func withheld(n float64) prometheus.Gatherer {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "scheduler_publish_withheld_total"})
	c.Add(n)
	reg.MustRegister(c)
	return reg
}

// The withheld counters count the DISPATCHED writes a replica made and did
// not itself publish before its next DISPATCHED write of the job. Here that
// is j1's alone: replica-1/h's publish of another job is not j1's, a relay's
// write is no replica's, and replica-1/h published j4 after another
// replica's DISPATCHED rewrite, which ends no window of replica-1/h's.
func TestWithheldCountsOnlyTheWritersOwnUnpublishedDispatches(t *testing.T) {
	s := newStory()
	to := func(actor, job string, states ...engine.JobState) {
		for _, st := range states {
			s.commit(job, st)
			s.h.States[len(s.h.States)-1].Actor = actor
		}
	}
	to("replica-1/h", "j1", engine.StatePending, engine.StateScheduled, engine.StateDispatched)
	s.publishBy("replica-1/h", s.at()+time.Second, history.PublishStored)
	s.h.Publishes[0].JobID, s.h.Publishes[0].MsgID = "j2", engine.DispatchMessageID("j2", 0)
	to("relay", "j3", engine.StatePending, engine.StateScheduled, engine.StateDispatched)
	to("replica-1/h", "j4", engine.StatePending, engine.StateScheduled, engine.StateDispatched)
	to("replica-2/h", "j4", engine.StateDispatched)
	s.publish("j4", 0, history.PublishStored)
	s.h.Publishes[1].Actor = "replica-1/h"
	s.h.End = s.at() + time.Second
	judge := func(n float64) []Violation {
		return only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
			Metrics: []prometheus.Gatherer{counters(0, 0, 2), withheld(n)}}), "metrics")
	}
	require.Empty(t, judge(1))
	v := judge(0)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "1 dispatches were written, heard to land, and never published by their writer")
	v = judge(2)
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "at most 1 dispatches")
}

// A DISPATCHED write whose replica was killed whole after it (an operator's
// kill, recorded under the replica's name) may never have been published
// or counted: the withheld counters need not say it. A kill of another
// replica, or one before the write, leaves it owed.
func TestAKilledWritersDispatchIsNotOwedToTheWithheldCounters(t *testing.T) {
	for why, kill := range map[string]struct {
		replica string
		before  bool
		owed    bool
	}{
		"its replica killed after the write":  {"replica-1", false, false},
		"another replica killed":              {"replica-2", false, true},
		"its replica killed before the write": {"replica-1", true, true},
	} {
		s := newStory()
		killed := func() {
			s.tick()
			s.h.Faults = append(s.h.Faults, history.FaultRecord{Step: s.step, Time: s.at(), Actor: kill.replica,
				Kind: "Event:kill", Effect: history.EffectCrash})
		}
		if kill.before {
			killed()
		}
		for _, st := range []engine.JobState{engine.StatePending, engine.StateScheduled, engine.StateDispatched} {
			s.commit("j1", st)
			s.h.States[len(s.h.States)-1].Actor = "replica-1/h"
		}
		if !kill.before {
			killed()
		}
		s.h.End = s.at() + time.Second
		v := only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
			Metrics: []prometheus.Gatherer{counters(0, 0, 0), withheld(0)}}), "metrics")
		if kill.owed {
			require.Len(t, v, 1, why)
			require.Contains(t, v[0].Message, "1 dispatches were written, heard to land, and never published by their writer", why)
		} else {
			require.Empty(t, v, why)
		}
	}
}

// A redelivered request that a handler took the job's lock for, found the
// job dispatched, and acked without a write is a skipped redelivery. The
// handler's own write before that take (its actor's first delivery wrote
// PENDING without the lock) was not made under it, so the skip still counts.
func TestSkippedRedeliveryIgnoresWritesBeforeTheTake(t *testing.T) {
	const handler = "replica-2/sys.job.submit#1.1"
	s := newStory().submit("j1").commit("j1", engine.StatePending)
	s.h.States[0].Actor = handler
	s.commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched)
	s.h.States[1].Actor, s.h.States[2].Actor = "replica-1/h", "replica-1/h"
	s.publishBy("replica-1/h", s.at()+time.Second, history.PublishStored)
	s.take(handler, "j1", "bbbb", time.Minute)
	s.h.Locks[0].Op = sut.LockTake
	s.tick()
	s.h.Settles = append(s.h.Settles, history.Settle{Step: s.step, Time: s.at(), Actor: handler,
		Subject: cordumSpec.Metrics.RequestSubject, JobID: "j1", Outcome: history.SettleAck})
	s.h.End = s.at() + time.Second
	v := only(Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: cordumSpec,
		Metrics: []prometheus.Gatherer{counters(0, 0, 1)}}), "metrics")
	require.Len(t, v, 1)
	require.Contains(t, v[0].Message, "scheduler_redelivery_skipped_total=0 but 1 requests were acked")
}
