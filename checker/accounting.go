package checker

import (
	"maps"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// checkAccounting: attempts follow the rule, every failed or timed-out job has a
// DLQ entry naming its root cause, no accepted job is lost, and the engine's
// counters agree with what the broker saw.
func checkAccounting(c *run) {
	end := c.in.History.End
	for _, id := range c.jobIDs {
		sys := c.in.System
		job, ok := c.in.Final[id]
		changes := c.jobStates[id]
		last := changes[len(changes)-1]
		if !ok {
			continue
		}
		// The attempt rule: every move into the scheduled state (a publish
		// rollback included) counts an attempt, but for moves from states
		// the spec does not charge (sut.Spec.AttemptsFrom).
		if got, want := job.Attempts, c.attempts(id); got != want {
			c.violate(LayerInvariants, "attempts", id, last.Step, last.Time,
				"job %s has attempts=%d but entered %s %d times the spec's attempt rule charges", id, got, sys.Scheduled, want)
		}
		st := job.State
		if st != sys.Failed && st != sys.TimedOut {
			continue
		}
		// The entry's status and last state are the dlq_entry guard's.
		entry, ok := c.in.DLQ[id]
		if ok && sys.RetryCapReason != "" && entry.ReasonCode == sys.RetryCapReason && job.Cause != "" {
			c.violate(LayerInvariants, "dlq_root_cause", id, last.Step, last.Time,
				"job %s DLQ reason %s hides its cause %s", id, entry.ReasonCode, job.Cause)
		}
	}
	for _, s := range c.in.History.Submitted {
		if _, held := c.in.Final[s.JobID]; s.Accepted && !held {
			c.violate(LayerInvariants, "no_job_lost", s.JobID, 0, end,
				"job %s was accepted by the broker at %s but the store never held it", s.JobID, s.At)
		}
	}
	checkMetrics(c)
	checkDLQAnnounced(c)
}

// checkDLQAnnounced: a dead-letter entry is announced on the bus only once
// it is stored, and every stored entry is announced by the handler that
// stored it, unless the handler never learnt that it did (the write's reply
// was lost) or its process crashed first. An attempt counts whatever the
// broker did with it: a failed announcement is only logged.
func checkDLQAnnounced(c *run) {
	subject := c.in.System.DLQSubject
	if subject == "" {
		return
	}
	announced := map[string]bool{}
	for _, p := range c.in.History.Publishes {
		if p.Subject != subject || p.JobID == "" {
			continue
		}
		end, ok := c.dlqCommit(p.JobID)
		if !ok || end.Step > p.Step {
			c.violate(LayerInvariants, "dlq_announced", p.JobID, p.Step, p.Time,
				"%s announced a DLQ entry of job %s that the store did not hold", p.Actor, p.JobID)
			continue
		}
		if p.Actor == end.Actor {
			announced[p.JobID] = true
		}
	}
	for _, id := range c.jobIDs {
		end, ok := c.dlqCommit(id)
		if !ok || announced[id] || c.replyLost(end) || c.wentDownSince(end.Actor, end.Step) {
			continue
		}
		c.violate(LayerInvariants, "dlq_announced", id, end.Step, end.Time,
			"%s stored job %s's DLQ entry (%s) and never announced it", end.Actor, id, end.To)
	}
}

// dlqCommit is the job's last state change when it left a DLQ entry: the
// entry is written by the same script.
func (c *run) dlqCommit(job string) (history.StateChange, bool) {
	states := c.jobStates[job]
	if _, ok := c.in.DLQ[job]; !ok || len(states) == 0 {
		return history.StateChange{}, false
	}
	return states[len(states)-1], true
}

// replyLost reports whether the writer of s was told its write failed
// though the store applied it.
func (c *run) replyLost(s history.StateChange) bool {
	for _, f := range c.in.History.Faults {
		if f.Step == s.Step && f.Actor == s.Actor && f.Effect == history.EffectReplyLostAfterApply {
			return true
		}
	}
	return false
}

// checkMetrics compares the engine's counters, summed over every replica
// incarnation, with the broker's ground truth. The counters are incremented
// right after the publish returns, with no yield point in between, so they
// must match exactly.
func checkMetrics(c *run) {
	if len(c.in.Metrics) == 0 {
		return
	}
	var failed, ok int
	for _, p := range c.in.History.Publishes {
		if !p.Dispatch {
			continue
		}
		switch p.Outcome {
		case history.PublishFailedClean, history.PublishFailedStored:
			failed++
		case history.PublishStored, history.PublishDeduplicated:
			ok++
		}
	}
	end := c.in.History.End
	m := c.in.System.Metrics
	if name := m.Rollbacks; name != "" {
		if got := c.counter(name); got != failed {
			c.violate(LayerInvariants, "metrics", "", 0, end, "%s=%d but %d dispatch publishes failed", name, got, failed)
		}
	}
	if name := m.Published; name != "" {
		if got := c.counter(name); got != ok {
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"%s=%d but the broker acknowledged %d dispatches", name, got, ok)
		}
	}
	if name := m.RollbackFailures; name != "" {
		least, most := c.rollbackFailures()
		if got := c.counter(name); got < least || got > most {
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"%s=%d but between %d and %d rollbacks after failed publishes did not land or lost their reply", name, got, least, most)
		}
	}
	if name := m.LockFenced; name != "" && c.in.System.LockRenewFailures > 0 {
		least, most := c.lockAbandonments()
		if got := c.counter(name); got < least || got > most {
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"%s=%d but between %d and %d sections saw a renewal find their lock gone or fail %d times in a row",
				name, got, least, most, c.in.System.LockRenewFailures)
		}
	}
	if len(m.Withheld) > 0 && !c.in.System.PublishFromRelay {
		got, names := c.counterSeries(m.Withheld), strings.Join(slices.Sorted(maps.Keys(m.Withheld)), ", ")
		least, most := c.unpublishedDispatches()
		switch {
		case got < least:
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"%d dispatches were written, heard to land, and never published by their writer, but the withheld counters (%s) say %d",
				least, names, got)
		case got > most:
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"the withheld counters (%s) say %d, but at most %d dispatches were written (or tried, or cut off with their lock) and not published by their writer",
				names, got, most)
		}
	}
	if name := m.RedeliverySkipped; name != "" && m.RequestSubject != "" && c.in.System.JobLock {
		if got, least := c.counter(name), c.skippedRedeliveries(m.RequestSubject); got < least {
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"%s=%d but %d requests were acked by a handler that found their job dispatched, running or done under its lock and wrote nothing",
				name, got, least)
		}
	}
	// A replica can only have failed closed on a state read that failed.
	if name := m.FailClosedReads; name != "" {
		if got, reads := c.counter(name), c.in.History.Redis.FailedJobReads; got > reads {
			c.violate(LayerInvariants, "metrics", "", 0, end,
				"%s=%d but only %d replica reads of a job failed", name, got, reads)
		}
	}
}

// rollbackFailures bounds how many publish rollbacks failed as their writer
// saw it: after a failed dispatch publish the publisher's next write of that
// job is the rollback, and it failed when it did not land, or landed with its
// reply lost. A publisher whose process crashed since may have died before
// the rollback's outcome was counted, so it only widens the bounds.
func (c *run) rollbackFailures() (least, most int) {
	sys := c.in.System
	for _, p := range c.in.History.Publishes {
		if !p.Dispatch || p.Outcome != history.PublishFailedClean && p.Outcome != history.PublishFailedStored {
			continue
		}
		var next *history.StateChange
		for i, s := range c.jobStates[p.JobID] {
			if s.Step > p.Step && s.Actor == p.Actor {
				next = &c.jobStates[p.JobID][i]
				break
			}
		}
		landed := next != nil && next.From == sys.Dispatched && sys.Entered(next.From, next.To, sys.Scheduled)
		failed := !landed || c.replyLost(*next)
		switch {
		case c.wentDownSince(p.Actor, p.Step):
			most++
		case failed:
			least++
			most++
		}
	}
	return least, most
}

// counter sums a counter family over every gatherer and label set.
func (c *run) counter(name string) int { return c.counterSeries(map[string][]string{name: nil}) }

// wentDownSince reports whether actor's process went down at or after step:
// it crashed, was killed, or was stopped (a graceful stop drains deliveries,
// not what the replica's own loops were doing).
func (c *run) wentDownSince(actor string, step uint64) bool {
	for _, f := range c.in.History.Faults {
		if f.Step >= step && group(f.Actor) == group(actor) &&
			(f.Effect == history.EffectCrash || f.Effect == history.EffectCrashAfterApply || f.Kind == "Event:stop") {
			return true
		}
	}
	return false
}

// unpublishedDispatches bounds the dispatches a handler wrote and did not
// publish. least: the DISPATCHED writes that landed, whose writer heard so
// (no lost reply) and stayed up, and that the writer never followed with a
// publish of the job before its next DISPATCHED write of it: each was held
// back, and the system's withheld counters must say so. most: every landed
// DISPATCHED write its writer did not follow with a publish, every replica
// write of a job that failed before it applied (any of them may have been a
// DISPATCHED write), and every section that may have given its lock up (its
// write then fails before it is sent).
func (c *run) unpublishedDispatches() (least, most int) {
	sys := c.in.System
	for _, id := range c.jobIDs {
		states := c.jobStates[id]
		for i, s := range states {
			if s.To != sys.Dispatched || s.From == sys.Dispatched || !strings.HasPrefix(s.Actor, "replica-") {
				continue
			}
			next := uint64(math.MaxUint64)
			for _, later := range states[i+1:] {
				if later.To == sys.Dispatched && later.Actor == s.Actor {
					next = later.Step
					break
				}
			}
			if c.publishedBy(s.Actor, id, s.Step, next) {
				continue
			}
			most++
			if !c.replyLost(s) && !c.wentDownSince(s.Actor, s.Step) {
				least++
			}
		}
	}
	for _, f := range c.in.History.Faults {
		if f.Point == history.PointRedis && f.Effect == history.EffectFailBeforeApply && strings.HasPrefix(f.Actor, "replica-") {
			if _, job := c.jobKeyIn(f.Target); job {
				most++
			}
		}
	}
	_, abandoned := c.lockAbandonments()
	return least, most + abandoned
}

// jobKeyIn reports whether a fault's target ("evalsha 9ef4b8d2 job:j-1")
// names a job: one of its keys.
func (c *run) jobKeyIn(target string) (string, bool) {
	for _, id := range c.jobIDs {
		if mentions(target, id) {
			return id, true
		}
	}
	return "", false
}

// publishedBy reports whether actor attempted a dispatch of job between two steps.
func (c *run) publishedBy(actor, job string, after, before uint64) bool {
	for _, p := range c.in.History.Publishes {
		if p.Dispatch && p.JobID == job && p.Actor == actor && p.Step > after && p.Step < before {
			return true
		}
	}
	return false
}

// counterSeries sums the series of each counter whose labels carry one of its
// values (every series when it lists none), over every gatherer.
func (c *run) counterSeries(series map[string][]string) int {
	total := 0.0
	if c.gathered == nil {
		// The run is over: its metrics no longer change, so each registry
		// is gathered once for every counter the checks read.
		c.gathered = make([][]*dto.MetricFamily, len(c.in.Metrics))
		for i, g := range c.in.Metrics {
			if families, err := g.Gather(); err == nil {
				c.gathered[i] = families
			}
		}
	}
	for _, families := range c.gathered {
		for _, f := range families {
			values, ok := series[f.GetName()]
			if !ok {
				continue
			}
			for _, m := range f.GetMetric() {
				if len(values) == 0 || slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
					return slices.Contains(values, l.GetValue())
				}) {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(total)
}

// skippedRedeliveries counts the job requests a handler acked with nothing
// to do: it took the job's lock while the job was dispatched, running or
// terminal, wrote nothing to it, and acked. Handlers are told apart by
// their lock token (a duplicated delivery runs a second handler under the
// same actor name); an actor that took the lock under two tokens is left out.
func (c *run) skippedRedeliveries(subject string) int {
	sys := c.in.System
	n := 0
	for _, s := range c.in.History.Settles {
		if s.Subject != subject || s.Outcome != history.SettleAck {
			continue
		}
		var take history.LockEvent
		takes := 0
		for _, l := range c.in.History.Locks {
			if l.Step < s.Step && l.Actor == s.Actor && l.JobID == s.JobID && l.Op == sut.LockTake && l.Held &&
				(takes == 0 || l.Token != take.Token) {
				take = l
				takes++
			}
		}
		if takes != 1 {
			continue
		}
		st, ok := c.stateBefore(s.JobID, take.Step)
		if !ok || st.To != sys.Dispatched && st.To != sys.Running && !sys.IsTerminal(st.To) {
			continue
		}
		wrote := false
		for _, ch := range c.jobStates[s.JobID] {
			wrote = wrote || ch.Actor == s.Actor && ch.Step > take.Step && ch.Step < s.Step
		}
		if !wrote {
			n++
		}
	}
	return n
}
