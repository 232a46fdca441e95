package checker

import (
	"slices"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// checkSubmitDedup holds a system to its submit de-duplication window
// (sut.Spec.SubmitDedupWindow): a job id its client submitted more than once
// (after a lost reply, or late) is made a job once, as long as every submit
// sent before the second making lies inside the window from the first. A job
// is made when the store first holds it, and made again when a later write
// starts it over, from nothing or from a terminal state, in a state a job is
// made in (the spec's moves from none): what a retry let through a forgotten
// or expired de-duplication key does. Any other move out of a terminal state
// is a resurrection, no_resurrection's, not this check's.
func checkSubmitDedup(c *run) {
	window := c.in.System.SubmitDedupWindow
	if window <= 0 {
		return
	}
	for _, job := range c.in.History.Submitted {
		attempts := job.Attempts
		if len(attempts) < 2 {
			continue // sent once: nothing was retried
		}
		made := c.makings(job.JobID)
		if len(made) < 2 {
			continue
		}
		again := made[1]
		last := attempts[0]
		for _, t := range attempts {
			if t <= again.Time {
				last = t
			}
		}
		if window != sut.SubmitDedupForever && last-attempts[0] > window {
			continue // a retry past the window may make the job again
		}
		c.violate(LayerInvariants, "submit_dedup", job.JobID, again.Step, again.Time,
			"job %s was made again (%s -> %s at %s, by %s) after its store first held it at %s; its client sent it %d times, "+
				"the last before that %s after the first, inside the %s submit de-duplication window the spec promises",
			job.JobID, history.StateOrNone(again.From), again.To, again.Time, again.Actor, made[0].Time, len(attempts),
			last-attempts[0], windowWords(window))
	}
}

// makings are the state changes that made job a job: its first, and every
// later one from nothing or from a terminal state into a state a job is
// made in.
func (c *run) makings(job string) []history.StateChange {
	var out []history.StateChange
	sys := c.in.System
	for i, s := range c.jobStates[job] {
		if i == 0 || (s.From == "" || sys.IsTerminal(s.From)) && slices.Contains(sys.Transitions[""], s.To) {
			out = append(out, s)
		}
	}
	return out
}

func windowWords(w time.Duration) string {
	if w == sut.SubmitDedupForever {
		return "unending"
	}
	return w.String()
}
