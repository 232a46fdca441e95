package checker

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// lease is one token's life on a job's lock, from the store's commands.
type lease struct {
	token, job, taker string
	events            []history.LockEvent // applied and failed, in step order
}

// leases groups the lock commands by token, in the order tokens first appear;
// built once a run, since several checks read it.
func (c *run) leases() []*lease {
	if c.byToken != nil {
		return c.byToken
	}
	events := append(append([]history.LockEvent{}, c.in.History.Locks...), c.in.History.LockFailures...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].Step < events[j].Step })
	var out []*lease
	byToken := map[string]*lease{}
	for _, l := range events {
		ls, ok := byToken[l.Token]
		if !ok {
			// A token's first command is its take.
			ls = &lease{token: l.Token, job: l.JobID, taker: l.Actor}
			byToken[l.Token] = ls
			out = append(out, ls)
		}
		ls.events = append(ls.events, l)
	}
	if out == nil {
		out = []*lease{} // built, and empty
	}
	c.byToken = out
	return out
}

// released is when the section under the lease issued its release (the
// section had ended), if it did.
func (ls *lease) released() (history.LockEvent, bool) {
	for _, l := range ls.events {
		if l.Op == sut.LockRelease {
			return l, true
		}
	}
	return history.LockEvent{}, false
}

// checkLeasesRenewed: a section's lock does not lapse while the section runs.
// Its renewals keep it (every third of the TTL in the engine), so a lease that
// ran out before the section issued its release needs a cause: its renewals
// failed or were held up (faults on the renewing actor), the replica paused,
// crashed or stopped, or the store lost writes. A section that loses its lock
// to the clock is fenced (its writes are refused), but meanwhile another
// handler may take the job: what the renewals are there to prevent.
func checkLeasesRenewed(c *run) {
	if !c.in.System.JobLock || c.in.System.LockRenewFailures == 0 {
		return
	}
	for _, ls := range c.leases() {
		taken, until, ok := ls.firstHold()
		if !ok {
			continue
		}
		end, endStep := c.in.History.End, uint64(0)
		if rel, ok := ls.released(); ok {
			end, endStep = rel.Sent, rel.SentStep
		}
		lapse, ok := ls.lapse(until, end, endStep)
		if !ok || c.leaseLapseExcused(ls, taken, lapse) {
			continue
		}
		c.violate(LayerInvariants, "lock_renewed", ls.job, 0, lapse,
			"%s took job %s's lock at %s; its lease ran out at %s while the section still ran (release issued at %s, or none), "+
				"with no failed or delayed renewal, pause, crash or stop to explain it", ls.taker, ls.job, taken, lapse, end)
	}
}

// firstHold is when the lease began and until when the take held it.
func (ls *lease) firstHold() (time.Duration, time.Duration, bool) {
	for _, l := range ls.events {
		if l.Held && !l.Failed {
			return l.Time, l.Until, true
		}
	}
	return 0, 0, false
}

// lapse is the first moment the lease ran out before end (when the section
// issued its release, in step endStep; 0 for none): the lease is extended by
// each applied command under the token that left it held.
func (ls *lease) lapse(until, end time.Duration, endStep uint64) (time.Duration, bool) {
	for _, l := range ls.events {
		if endStep != 0 && l.Step >= endStep || l.Time >= end {
			break
		}
		if l.Time > until {
			return until, true
		}
		if l.Held && l.Until > until {
			until = l.Until
		}
	}
	return until, until < end
}

// leaseLapseExcused reports whether a fault explains a lease running out at
// lapse: a failed renewal under the token, a fault on one of the replica's
// timers (the renewals), or a pause, crash or stop of the replica since the
// take; or the store forgetting writes.
func (c *run) leaseLapseExcused(ls *lease, taken, lapse time.Duration) bool {
	for _, l := range ls.events {
		if l.Failed && l.Time <= lapse {
			return true
		}
	}
	g := group(ls.taker)
	for _, f := range c.in.History.Faults {
		if f.Time < taken || f.Time > lapse || group(f.Actor) != g {
			continue
		}
		switch {
		case strings.Contains(f.Actor, "/timer#"),
			f.Effect == history.EffectPause, f.Effect == history.EffectCrash, f.Effect == history.EffectCrashAfterApply,
			strings.HasPrefix(f.Kind, "Event:"):
			return true
		}
	}
	for _, loss := range c.in.History.StoreLosses {
		if loss.Time >= taken {
			return true
		}
	}
	return false
}

// lockAbandonments bounds how many sections gave their lock up. A section
// gives it up when a background renewal (one by another actor than the
// section's) finds the lock gone, or when LockRenewFailures renewals in a
// row fail as the renewer saw them (not applied, or the reply lost): that
// bounds the count from above. From below count the sections whose renewal
// found the lock gone, before the section had ended (its release was issued
// in a later step) and with its replica still up: nothing else stops it then.
func (c *run) lockAbandonments() (least, most int) {
	limit := c.in.System.LockRenewFailures
	for _, ls := range c.leases() {
		rel, released := ls.released()
		failures := 0
		for _, r := range ls.events {
			if r.Op != sut.LockRenew || r.Actor == ls.taker {
				continue // the section's own renewal, before a publish
			}
			if r.Failed {
				failures++
			} else {
				failures = 0
			}
			if r.Failed && failures < limit || !r.Failed && r.Held {
				continue
			}
			// This renewal ends the section's lock unless the section had ended.
			most++
			if (!released || rel.SentStep >= r.Step) && !c.wentDownSince(r.Actor, r.Step) {
				least++
			}
			break
		}
	}
	return least, most
}

// lockCheckedBeforePublish: the publisher's own last command on the job's
// lock before its publish (the renewal that checks the lock, or the take
// that repairs a lapse) left it holding the lock, as far as it could tell.
// A check that found the lock gone or failed, or a retake that did, ends the
// dispatch unpublished; a pause after a check that held is the worker fence's
// to catch, not this guard's.
//
// The section is told by its token, the one its DISPATCHED write carried: a
// duplicated delivery runs a second handler under the same actor name.
func lockCheckedBeforePublish(c *run, cm Commit) string {
	p := cm.Publish
	token := ""
	for _, s := range c.jobStates[p.JobID] {
		if s.Step < p.Step && s.Actor == p.Actor && s.To == c.in.System.Dispatched {
			token = s.Token
		}
	}
	if token == "" {
		return ""
	}
	var last history.LockEvent
	found := false
	for _, events := range [][]history.LockEvent{c.in.History.Locks, c.in.History.LockFailures} {
		for _, l := range events {
			if l.Step < p.Step && l.Token == token && l.Actor == p.Actor && l.Op != sut.LockRelease &&
				(!found || l.Step > last.Step) {
				last, found = l, true
			}
		}
	}
	switch {
	case !found || last.Held && !last.Failed:
		return ""
	case last.Failed:
		return fmt.Sprintf("%s's last %s of the lock (step %d, token %s) failed as it saw it, and it published at step %d",
			p.Actor, last.Op, last.Step, last.Token, p.Step)
	}
	return fmt.Sprintf("%s's last %s of the lock (step %d, token %s) found it held by another or by no one, and it published at step %d",
		p.Actor, last.Op, last.Step, last.Token, p.Step)
}
