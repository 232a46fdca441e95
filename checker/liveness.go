package checker

import (
	"time"

	"github.com/dispatchsim/dispatchsim/history"
)

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
			deadline := s.Time + c.dispatchTimeout(id)
			if !c.spec.Timely {
				deadline = max(deadline, h.FaultPhaseEnd)
			}
			// A lock its holder's crash left on the job keeps the reconciler
			// off it until the lock runs out.
			deadline = max(deadline, c.strandedLockUntil(id, until))
			deadline += slack
			if until > deadline {
				c.violate(LayerLiveness, "dispatch_timeout", id, step, until,
					"job %s stayed %s from %s to %s, past the dispatch timeout and a reconciler tick", id, s.To, s.Time, until)
			}
		}
	}
	checkGraceNotLate(c)
	checkRunKeysLive(c)
	c.out.Figures.TimeoutNeverPublished = timeoutNeverPublished(c)
}

// strandedLockUntil is when the last lock on job taken before `before` and
// never released runs out, when its holder crashed or stopped while it held
// it: nothing frees such a lock but its TTL, and a sweep that finds it busy
// passes the job by (0 when there is none).
func (c *run) strandedLockUntil(job string, before time.Duration) time.Duration {
	var out time.Duration
	for _, ls := range c.leases() {
		taken, _, ok := ls.firstHold()
		if ls.job != job || !ok || taken >= before {
			continue
		}
		if _, released := ls.released(); released {
			continue
		}
		var last history.LockEvent
		for _, l := range ls.events {
			if l.Held && !l.Failed {
				last = l
			}
		}
		if c.wentDownSince(ls.taker, last.Step) {
			out = max(out, last.Until)
		}
	}
	return out
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

// busyLockSlack covers a retry that finds the job's lock busy and waits for
// it (the engine polls 2s, then asks again 500ms later).
const busyLockSlack = 5 * time.Second

// checkGraceNotLate: in a timely world, a job whose topic maps to no pool
// from its first scheduling on fails with that cause once the grace window
// has passed: at the first retry after it, no later than the longest
// backoff after the window.
func checkGraceNotLate(c *run) {
	sys := c.in.System
	if !c.spec.Timely || sys.PickGrace == 0 || sys.BackoffMax == 0 {
		return
	}
	for _, id := range c.jobIDs {
		job, ok := c.submitted(id)
		first, scheduled := c.firstEntered(id, sys.Scheduled)
		if !ok || !scheduled || c.topicMappedSince(job.Topic, first.Time) {
			continue
		}
		deadline := first.Time + sys.PickGrace + sys.BackoffMax + busyLockSlack
		end, ended := c.terminalChange(id)
		if ended && end.Time <= deadline {
			continue
		}
		until, step := c.in.History.End, uint64(0)
		if ended {
			until, step = end.Time, end.Step
		}
		c.violate(LayerLiveness, "grace_not_late", id, step, until,
			"job %s's topic %q had no pool from its first scheduling at %s; it was still not failed at %s, past the %s grace, a %s backoff and %s for a busy lock",
			id, job.Topic, first.Time, deadline, sys.PickGrace, sys.BackoffMax, busyLockSlack)
	}
}

// topicMappedSince reports whether some routing in force from t on maps the
// topic to a pool.
func (c *run) topicMappedSince(topic string, t time.Duration) bool {
	for _, r := range c.routingsDuring(t, c.in.History.End) {
		if mapped, _ := r.Routing.Eligible(topic, nil); mapped {
			return true
		}
	}
	return false
}
