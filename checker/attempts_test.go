package checker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
)

// requeued is a job whose first dispatch a crash ended: moved from
// DISPATCHED back to SCHEDULED, dispatched again and run to SUCCEEDED,
// with attempts stored as given.
func requeued(stored int) *story {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched).publish("j1", 0, history.PublishStored).
		commit("j1", engine.StateScheduled).commit("j1", engine.StateDispatched).
		commit("j1", engine.StateRunning).execute("j1", 0, "d-j1").commit("j1", engine.StateSucceeded)
	f := s.final["j1"]
	f.Attempts = stored
	s.final["j1"] = f
	return s
}

func attemptsWith(s *story, from []string) *Result {
	s.h.End = s.at()
	spec := cordumSpec
	spec.AttemptsFrom = from
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: spec})
}

// The attempt rule is the spec's: Cordum's charges every move into
// SCHEDULED; a system that does not charge a requeue from DISPATCHED says
// so, and is then held to that rule, not to none.
func TestTheAttemptRuleIsTheSpecs(t *testing.T) {
	notFromDispatched := []string{"", string(engine.StatePending), string(engine.StateScheduled), string(engine.StateRetrying)}
	require.Contains(t, checkers(attemptsWith(requeued(1), nil)), "attempts", "Cordum's rule charges the requeue")
	require.NotContains(t, checkers(attemptsWith(requeued(2), nil)), "attempts")
	require.NotContains(t, checkers(attemptsWith(requeued(1), notFromDispatched)), "attempts")
	require.Contains(t, checkers(attemptsWith(requeued(2), notFromDispatched)), "attempts",
		"a rule that charges no requeue still counts the other entries")
}
