package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// remade is a job its client submitted at 1 s and again retryAt later,
// which ran to SUCCEEDED and was then made again from nothing, as a
// submit whose de-duplication key had expired makes it.
func remade(retryAt time.Duration) *story {
	s := newStory().dispatch("j1")
	s.h.Submitted[0].Attempts = []time.Duration{s.h.Submitted[0].At, s.h.Submitted[0].At + retryAt}
	s.step += 200 // the re-making comes after the retry
	s.last["j1"] = ""
	return s.commit("j1", engine.StatePending)
}

func checkWithWindow(s *story, window time.Duration) *Result {
	s.h.End = s.at() + time.Second
	spec := cordumSpec
	spec.SubmitDedupWindow = window
	return Check(Input{History: &s.h, Final: s.final, DLQ: s.dlq, System: spec})
}

func TestSubmitRetriedInsideTheWindowMakingASecondJobIsCaught(t *testing.T) {
	for _, window := range []time.Duration{2 * time.Minute, sut.SubmitDedupForever} {
		r := checkWithWindow(remade(90*time.Second), window)
		require.Contains(t, checkers(r), "submit_dedup", "window %s", window)
		for _, v := range r.Violations {
			if v.Checker == "submit_dedup" {
				require.Equal(t, "j1", v.Job)
				require.Contains(t, v.Message, "sent it 2 times, the last before that 1m30s after the first")
			}
		}
	}
}

func TestSubmitDedupHoldsOnlyWhatTheSpecPromises(t *testing.T) {
	// A retry past the window may make the job again; a system that
	// promises no window is not held to one.
	for _, window := range []time.Duration{time.Minute, 0} {
		require.NotContains(t, checkers(checkWithWindow(remade(90*time.Second), window)), "submit_dedup", "window %s", window)
	}
	// Sent once and made again: a resurrection, no_resurrection's to name,
	// not a retried submit's.
	once := remade(90 * time.Second)
	once.h.Submitted[0].Attempts = once.h.Submitted[0].Attempts[:1]
	require.NotContains(t, checkers(checkWithWindow(once, sut.SubmitDedupForever)), "submit_dedup")
	// Retried, and moved out of a terminal state into one no job is made
	// in: a resurrection too.
	s0 := newStory().dispatch("j1")
	s0.h.Submitted[0].Attempts = []time.Duration{s0.h.Submitted[0].At, s0.h.Submitted[0].At + time.Second}
	s0.commit("j1", engine.StateRetrying)
	r := checkWithWindow(s0, sut.SubmitDedupForever)
	require.Contains(t, checkers(r), "no_resurrection")
	require.NotContains(t, checkers(r), "submit_dedup")
	// Retried, but made once: nothing to find.
	s := newStory().dispatch("j1")
	s.h.Submitted[0].Attempts = []time.Duration{s.h.Submitted[0].At, s.h.Submitted[0].At + time.Second}
	require.Empty(t, checkWithWindow(s, sut.SubmitDedupForever).Violations)
}

// A job made again from a terminal state is made again too, not only one
// made from nothing.
func TestSubmitDedupCountsAMakingOverATerminalRecord(t *testing.T) {
	s := newStory().dispatch("j1")
	s.h.Submitted[0].Attempts = []time.Duration{s.h.Submitted[0].At, s.h.Submitted[0].At + 10*time.Second}
	s.step += 20
	s.commit("j1", engine.StatePending)
	require.Contains(t, checkers(checkWithWindow(s, sut.SubmitDedupForever)), "submit_dedup")
}
