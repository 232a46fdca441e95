package checker

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
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
