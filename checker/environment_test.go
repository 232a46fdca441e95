package checker

import (
	"testing"
	"time"

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
// nothing: the seed fails at the harness layer, above anything the
// environment layer would take, and says what the keyspace got wrong.
func TestAnInconsistentRestoreIsTheHarnesssAndExcusesNothing(t *testing.T) {
	lost := newStory().dispatch("j1").read(1, "j1", string(engine.StateSucceeded), false).
		lose("j1", engine.StateRunning).read(2, "j1", string(engine.StateRunning), false).
		commit("j1", engine.StateSucceeded)
	lost.h.StoreLosses[0].Inconsistent = []string{"job j1 is RUNNING but not in job:index:RUNNING"}
	r := lost.check()
	require.Equal(t, []string{"store_restored_faithfully"}, checkers(r))
	require.Equal(t, LayerHarness, r.FirstFailedLayer())
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

// brokerLoss has the broker forget the messages of jobs, stored since the
// story's start, at the story's current step.
func (s *story) brokerLoss(jobs ...string) *story {
	s.tick()
	s.h.BrokerLosses = append(s.h.BrokerLosses, history.BrokerLoss{Step: s.step, Time: s.at(), Messages: len(jobs), Jobs: jobs})
	return s
}

// The broker lost j1's first dispatch copy, and with it the message id: the
// re-publish it stored and the second execution are the environment's. The
// same story on a job the loss did not touch, or a loss after the fact, is
// still the engine's; and the store kept every write, so a resurrection on a
// job whose messages were lost is still the engine's.
func TestABrokerLossExcusesOnlyWhatRestsOnItsMessages(t *testing.T) {
	lost := ambiguousThenRepublished(5*time.Second, history.PublishStored)
	lost.h.BrokerLosses = []history.BrokerLoss{{Step: lost.h.Publishes[1].Step - 1, Messages: 1, Jobs: []string{"j1"}}}
	r := lost.checkWithBus(jetStream)
	require.Equal(t, []string{"exactly_once_publish", "exactly_once_execution"}, checkers(r))
	for _, v := range r.Violations {
		require.Equal(t, LayerEnvironment, v.Layer, "%s", v)
		require.Contains(t, v.Message, "after the broker lost the messages it stored")
	}
	require.False(t, r.SystemFailed())

	elsewhere := ambiguousThenRepublished(5*time.Second, history.PublishStored)
	elsewhere.h.BrokerLosses = []history.BrokerLoss{{Step: 1, Messages: 1, Jobs: []string{"j2"}}}
	require.True(t, elsewhere.checkWithBus(jetStream).SystemFailed(), "another job's loss excuses nothing here")

	after := ambiguousThenRepublished(5*time.Second, history.PublishStored).brokerLoss("j1")
	require.True(t, after.checkWithBus(jetStream).SystemFailed(), "a loss after the re-publish excuses it not")

	resurrected := newStory().dispatch("j2").brokerLoss("j2").commit("j2", engine.StateRunning)
	r = resurrected.check()
	require.True(t, r.SystemFailed())
	require.Contains(t, checkers(r), "no_resurrection")
	for _, v := range r.Violations {
		require.NotEqual(t, LayerEnvironment, v.Layer, "%s", v)
	}
}

// A job whose request the broker lost never came to exist: not held
// (no_job_lost) and so never terminal, both the loss's. A job that did exist
// and was left unfinished is still the engine's to end.
func TestABrokerLossOfARequestExcusesTheJobNeverMade(t *testing.T) {
	s := newStory().submit("j9").brokerLoss("j9")
	r := s.check()
	require.ElementsMatch(t, []string{"no_job_lost", "job_terminal"}, checkers(r))
	require.False(t, r.SystemFailed(), "%v", r.Violations)

	stuck := newStory().submit("j9").commit("j9", engine.StatePending).brokerLoss("j9")
	r = stuck.check()
	require.True(t, r.SystemFailed())
	require.Contains(t, checkers(r), "job_terminal")
}
