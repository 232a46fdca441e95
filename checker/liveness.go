package checker

import "github.com/dispatchsim/dispatchsim/history"

// checkLiveness: after the heal phase every accepted job is terminal, and no job
// sat DISPATCHED past the dispatch timeout plus the reconciler's ticks once the
// faults stopped.
func checkLiveness(c *run) {
	h := c.in.History
	for _, s := range h.Submitted {
		if !s.Accepted {
			continue
		}
		sys := c.in.System
		st := c.in.Final[s.JobID].State
		if c.spec.AllSucceed && sys.IsTerminal(st) && st != sys.Succeeded && st != sys.Cancelled {
			changes := c.jobStates[s.JobID]
			c.violate(LayerLiveness, "job_succeeded", s.JobID, lastStep(changes), h.End,
				"job %s ended %s (DLQ reason %q) though every job could succeed", s.JobID, st, c.in.DLQ[s.JobID].ReasonCode)
		}
		if !sys.IsTerminal(st) {
			changes := c.jobStates[s.JobID]
			var step uint64
			if len(changes) > 0 {
				step = changes[len(changes)-1].Step
			}
			c.violate(LayerLiveness, "job_terminal", s.JobID, step, h.End,
				"job %s still %s when the heal phase ended", s.JobID, history.StateOrNone(st))
		}
	}
	// Two reconciler ticks of slack: one for the tick to come round, one for a
	// replica that was mid-restart when it did.
	slack := 2 * c.spec.ReconcileInterval
	for _, id := range c.jobIDs {
		changes := c.jobStates[id]
		for i, s := range changes {
			if s.To != c.in.System.Dispatched {
				continue
			}
			until, step := h.End, s.Step
			if i+1 < len(changes) {
				until, step = changes[i+1].Time, changes[i+1].Step
			}
			deadline := max(s.Time+c.dispatchTimeout(id), h.FaultPhaseEnd) + slack
			if until > deadline {
				c.violate(LayerLiveness, "dispatch_timeout", id, step, until,
					"job %s stayed %s from %s to %s, past the dispatch timeout and a reconciler tick", id, s.To, s.Time, until)
			}
		}
	}
	checkRunKeysLive(c)
	c.out.Figures.TimeoutNeverPublished = timeoutNeverPublished(c)
}

// timeoutNeverPublished counts jobs that ended TIMEOUT without the broker ever
// storing their dispatch: the blind window of state-before-publish.
func timeoutNeverPublished(c *run) int {
	published := map[string]bool{}
	for _, p := range c.in.History.Publishes {
		if p.Dispatch && p.Stored() {
			published[p.JobID] = true
		}
	}
	n := 0
	for id, job := range c.in.Final {
		if job.State == c.in.System.TimedOut && !published[id] {
			n++
		}
	}
	return n
}
