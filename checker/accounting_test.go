package checker

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
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
