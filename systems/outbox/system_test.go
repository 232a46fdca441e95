package outbox

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// The outbox in the simulator, no faults: every job succeeds, once, and the
// checkers (following its spec: compound SCHEDULED+DISPATCHED, RUNNING
// written by the relay) find nothing.
func TestOutboxRunsCleanInTheSimulator(t *testing.T) {
	w := sim.NewWorld(sim.Config{System: System{}, Seed: 3, Bus: sim.BusConfig{Dedup: true},
		Workload: sim.Workload{Jobs: 15, StatusReads: 20, CancelRate: 0.1}})
	res := w.Run()
	require.NoError(t, res.Err)
	r := checker.Check(checker.Input{History: res.History, Final: res.Final, DLQ: res.DLQ, Admission: res.Admission,
		Metrics: w.Metrics(), System: w.Spec(), RunErr: res.Err})
	require.False(t, r.Failed(), r.Summary())
	sawCompound := false
	for _, s := range res.History.States {
		if s.To == w.Spec().Dispatched && s.From != w.Spec().Scheduled {
			sawCompound = true
		}
	}
	require.True(t, sawCompound, "the dispatch script is observed as one move into DISPATCHED")
}

// Against engine/'s spec, the same history breaks the attempt rule: the spec
// is what makes it legal.
func TestCompoundStepIsLegalOnlyUnderItsSpec(t *testing.T) {
	spec := System{}.Spec(sut.Options{})
	require.True(t, spec.Allowed("PENDING", "DISPATCHED"))
	require.True(t, spec.Entered("PENDING", "DISPATCHED", "SCHEDULED"))
	require.False(t, spec.Allowed("DISPATCHED", "SCHEDULED"), "no rollback edge")
	require.False(t, spec.JobLock)
}
