package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// sweepTakesStale: a sweep (the reconciler, the replayer) takes the lock of
// a job only when its last scan could have listed the job: the job was in
// the scanned state and untouched for the sweep's staleness in true time. A
// sweep that takes fresh jobs' locks contends with the handlers working on
// them, and re-drives or times out what nobody forgot.
//
// A scan lists a job whose update time, on its writer's clock, is at most the
// scanner's clock minus the staleness: in true time the job's last write was
// sent no later than the scan's time minus the staleness (and 1 ms of
// millisecond truncation), plus the replicas' clock spread for a system that
// declares it measures on their clocks (clockExcuse).
func sweepTakesStale(c *run, cm Commit) string {
	sweep, ok := c.sweepOf(cm.Lock.Actor)
	if !ok {
		return ""
	}
	scan, ok := c.lastScan(cm.Lock.Actor, cm.Step)
	if !ok {
		return fmt.Sprintf("%s took the lock with no scan of stale jobs before it", cm.Lock.Actor)
	}
	if !contains(sweep.States, scan.State) {
		return fmt.Sprintf("%s took the lock after a scan of %s, a state its sweep does not handle", cm.Lock.Actor, scan.State)
	}
	last, ok := c.stateBefore(cm.Job, scan.Step)
	if !ok {
		return fmt.Sprintf("the job had no state when %s scanned %s at %s (step %d)", cm.Lock.Actor, scan.State, scan.Time, scan.Step)
	}
	if last.To != scan.State {
		return fmt.Sprintf("the job was %s, not %s, when %s scanned at %s (step %d)",
			last.To, scan.State, cm.Lock.Actor, scan.Time, scan.Step)
	}
	after := c.staleAfter(sweep, scan.State)
	tolerance := c.clockExcuse() + time.Millisecond
	if untouched := scan.Time - last.Sent; untouched+tolerance <= after {
		return fmt.Sprintf("%s scanned %s at %s (step %d) and took the lock at %s; the job's last write (to %s) was sent at %s: "+
			"untouched for %s in true time, stale after %s, tolerance %s",
			cm.Lock.Actor, scan.State, scan.Time, scan.Step, cm.Time, last.To, last.Sent, untouched, after, tolerance)
	}
	return ""
}

// sweepOf is the sweep an actor ("replica-2/reconciler") runs, if any.
func (c *run) sweepOf(actor string) (sut.Sweep, bool) {
	i := strings.LastIndexByte(actor, '/')
	if i < 0 {
		return sut.Sweep{}, false
	}
	for _, s := range c.in.System.Sweeps {
		if s.Actor == actor[i+1:] {
			return s, true
		}
	}
	return sut.Sweep{}, false
}

// lastScan is actor's last scan before step: the one whose listing its
// sweep is working through (a sweep scans a state, then handles each job
// listed, then scans the next).
func (c *run) lastScan(actor string, step uint64) (history.Scan, bool) {
	var last history.Scan
	found := false
	for _, s := range c.in.History.Scans {
		if s.Step >= step {
			break
		}
		if s.Actor == actor {
			last, found = s, true
		}
	}
	return last, found
}

// stateBefore is the job's last committed change before step.
func (c *run) stateBefore(job string, step uint64) (history.StateChange, bool) {
	var last history.StateChange
	found := false
	for _, s := range c.jobStates[job] {
		if s.Step >= step {
			break
		}
		last, found = s, true
	}
	return last, found
}

// staleAfter is how long a job of state must sit untouched before sweep lists
// it: the sweep's own After, or the state's timeout, the shortest any topic
// has (the scan's cutoff; each job's own timeout is checked under its lock).
func (c *run) staleAfter(sweep sut.Sweep, state string) time.Duration {
	if sweep.After > 0 {
		return sweep.After
	}
	sys := c.in.System
	switch state {
	case sys.Dispatched:
		d := sys.DispatchTimeout
		for _, t := range sys.DispatchTimeoutByTopic {
			if t > 0 {
				d = min(d, t)
			}
		}
		return d
	case sys.Running:
		return sys.RunningTimeout
	}
	return 0
}

// cancelSettledApplied: a handler settles a client's cancel for good (ack, or
// drop) only once the job is terminal: cancelled by it, or finished before
// it. A cancel acked while the job still runs is lost; nothing redelivers it.
func cancelSettledApplied(c *run, cm Commit) string {
	s := cm.Settle
	if !s.Cancel || s.Outcome == history.SettleNak {
		return ""
	}
	last, ok := c.stateBefore(cm.Job, cm.Step+1)
	switch {
	case !ok:
		return fmt.Sprintf("%s settled the cancel (%s) at %s and the store holds no record of the job", s.Actor, s.Outcome, s.Time)
	case !c.in.System.IsTerminal(last.To):
		return fmt.Sprintf("%s settled the cancel (%s) at %s while the job was %s (since step %d)",
			s.Actor, s.Outcome, s.Time, last.To, last.Step)
	}
	return ""
}
