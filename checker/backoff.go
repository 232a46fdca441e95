package checker

import (
	"time"

	"github.com/dispatchsim/dispatchsim/history"
)

// checkBackoff: a handler whose dispatch publish failed asks for its retry
// after the system's backoff, min(base<<n + jitter, max) with the jitter
// below its bound; and the jitter is drawn, so jobs that failed together do
// not all come back together. One delay with no jitter is a fair draw; three
// or more below the cap, all without, are not (each is a one-in-hundreds-of-
// millions draw with a jitter bound of 500ms counted in nanoseconds).
func checkBackoff(c *run) {
	sys := c.in.System
	if sys.BackoffBase == 0 || sys.BackoffMax == 0 {
		return
	}
	var uncapped, exact int
	var last history.Settle
	for _, p := range c.in.History.Publishes {
		if !p.Dispatch || p.Outcome != history.PublishFailedClean && p.Outcome != history.PublishFailedStored {
			continue
		}
		s, ok := c.settleAfter(p.Actor, p.Step)
		if !ok || s.Outcome != history.SettleNak {
			continue
		}
		k, ok := backoffShift(s.Delay, sys.BackoffBase, sys.BackoffJitter, sys.BackoffMax)
		if !ok {
			c.violate(LayerInvariants, "backoff", p.JobID, s.Step, s.Time,
				"%s asked for a retry after %s when its publish failed; the backoff is min(%s<<n + jitter below %s, %s)",
				s.Actor, s.Delay, sys.BackoffBase, sys.BackoffJitter, sys.BackoffMax)
			continue
		}
		if s.Delay < sys.BackoffMax {
			uncapped++
			if s.Delay == sys.BackoffBase<<k {
				exact++
				last = s
			}
		}
	}
	if sys.BackoffJitter > 0 && uncapped >= 3 && exact == uncapped {
		c.violate(LayerInvariants, "backoff", last.JobID, last.Step, last.Time,
			"all %d retries after a failed publish came back after a whole %s<<n, none with jitter: retries of jobs that failed together come back together",
			uncapped, sys.BackoffBase)
	}
}

// backoffShift finds the n whose backoff window holds d: base<<n <= d <
// base<<n + jitter, or d at the cap.
func backoffShift(d, base, jitter, most time.Duration) (int, bool) {
	if d == most {
		return 0, true
	}
	for n := 0; base<<n < most && n < 63; n++ {
		if lo := base << n; d >= lo && d < lo+max(jitter, 1) {
			return n, true
		}
	}
	return 0, false
}

// settleAfter is actor's first settle after step: a delivery actor settles
// its one message when its handler returns.
func (c *run) settleAfter(actor string, step uint64) (history.Settle, bool) {
	for _, s := range c.in.History.Settles {
		if s.Actor == actor && s.Step > step {
			return s, true
		}
	}
	return history.Settle{}, false
}
