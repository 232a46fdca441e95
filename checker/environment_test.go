package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
)

// lose has the store forget job's last write: it comes back in state back.
func (s *story) lose(job string, back engine.JobState) *story {
	s.tick()
	s.h.StoreLosses = append(s.h.StoreLosses, history.StoreLoss{Step: s.step, Time: s.at(), Since: s.at() - 2*s.at()/3,
		Keys: 1, Jobs: []string{job}})
	s.h.States = append(s.h.States, history.StateChange{Step: s.step, Time: s.at(), Sent: s.at(), Actor: "store",
		JobID: job, From: string(s.last[job]), To: string(back)})
	s.last[job] = back
	f := s.final[job]
	f.State = string(back)
	s.final[job] = f
	return s
}

// A failover loses j1's SUCCEEDED: the record goes back to RUNNING and a
// client reads RUNNING after reading SUCCEEDED. Every finding on j1 from the
// loss on is the store's; the same finding on j2, which the loss did not
// touch, is still the engine's.
func TestViolationsAfterAStoreLossAreTheEnvironments(t *testing.T) {
	lost := newStory().dispatch("j1").read(1, "j1", string(engine.StateSucceeded), false).
		lose("j1", engine.StateRunning).read(2, "j1", string(engine.StateRunning), false).
		commit("j1", engine.StateSucceeded)
	r := lost.check()
	require.NotEmpty(t, r.Violations, "the story breaks the engine's promises")
	for _, v := range r.Violations {
		require.Equal(t, LayerEnvironment, v.Layer, "%s", v)
		require.Contains(t, v.Message, "after the store forgot acknowledged writes")
	}
	require.Equal(t, LinOk, r.Linearizability, "the illegal partition is j1's, which the store forgot")
	require.False(t, r.SystemFailed())
	require.True(t, r.Failed(), "still reported")

	// The same resurrection on j2, which no loss touched, is the engine's.
	both := newStory().dispatch("j2").commit("j2", engine.StateRunning).dispatch("j1").lose("j1", engine.StateRunning)
	r = both.check()
	require.True(t, r.SystemFailed())
	var engines []string
	for _, v := range r.Violations {
		if v.Layer != LayerEnvironment {
			require.Equal(t, "j2", v.Job, "%s", v)
			engines = append(engines, v.Checker)
		}
	}
	require.Contains(t, engines, "no_resurrection")
}

// A restore the simulator got wrong (reverted jobs missing from their state
// index, as when a snapshot kept miniredis's live sorted sets) excuses
// nothing: the seed fails at the assumptions layer, above anything the
// environment layer would take, and says what the keyspace got wrong.
func TestAnInconsistentRestoreIsTheHarnesssAndExcusesNothing(t *testing.T) {
	lost := newStory().dispatch("j1").read(1, "j1", string(engine.StateSucceeded), false).
		lose("j1", engine.StateRunning).read(2, "j1", string(engine.StateRunning), false).
		commit("j1", engine.StateSucceeded)
	lost.h.StoreLosses[0].Inconsistent = []string{"job j1 is RUNNING but not in job:index:RUNNING"}
	r := lost.check()
	require.Equal(t, []string{"store_restored_faithfully"}, checkers(r))
	require.Equal(t, LayerAssumptions, r.FirstFailedLayer())
	require.True(t, r.SystemFailed(), "a harness defect is never a pass")
	require.Contains(t, r.Violations[0].Message, "not in job:index:RUNNING")
}

// A violation on the job before the loss is not excused by it.
func TestAStoreLossExcusesNothingBeforeIt(t *testing.T) {
	s := newStory().dispatch("j1").commit("j1", engine.StateRunning).lose("j1", engine.StateSucceeded)
	r := s.check()
	var before []Violation
	for _, v := range r.Violations {
		if v.Step < s.h.StoreLosses[0].Step {
			before = append(before, v)
		}
	}
	require.NotEmpty(t, before)
	for _, v := range before {
		require.NotEqual(t, LayerEnvironment, v.Layer, "%s", v)
	}
}

// A finding judged on the record the run left (a DLQ entry announced but not
// held at the end) is the loss's even when stamped before it; a finding about
// a step before the loss is not.
func TestAStoreLossExcusesFinalRecordFindingsStampedBeforeIt(t *testing.T) {
	c := newRun(Input{History: &history.History{StoreLosses: []history.StoreLoss{{Step: 9, Jobs: []string{"j1"}}}},
		System: cordumSpec})
	c.out.Linearizability = LinOk
	c.violate(LayerInvariants, "dlq_announced", "j1", 5, 0, "announced, not held")
	c.violate(LayerInvariants, "transition_graph", "j1", 5, 0, "a move the graph forbids")
	attributeToEnvironment(c)
	require.Equal(t, LayerEnvironment, c.out.Violations[0].Layer)
	require.Equal(t, LayerInvariants, c.out.Violations[1].Layer)
}
