package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// CommitKind names a kind of step the environment accepted on a system's
// behalf: the refinement check holds each one to the guards of its kind.
type CommitKind string

// The commits a history records.
const (
	// CommitState is a job state change the store accepted.
	CommitState CommitKind = "state"
	// CommitPublish is a dispatch the broker stored.
	CommitPublish CommitKind = "publish"
	// CommitDLQ is a dead-letter entry, written with the terminal state.
	CommitDLQ CommitKind = "dlq"
	// CommitLock is a job lock a token took: the store's SET NX succeeded.
	CommitLock CommitKind = "lock"
	// CommitSettle is a handler's final word on a job message: an ack, or
	// an ack that drops it.
	CommitSettle CommitKind = "settle"
)

// Commit is one accepted step, with what it committed.
type Commit struct {
	Kind    CommitKind
	Step    uint64
	Time    time.Duration
	Job     string
	State   history.StateChange   // CommitState, CommitDLQ: the terminal move
	Publish history.PublishRecord // CommitPublish
	DLQ     sut.DLQEntry          // CommitDLQ
	Lock    history.LockEvent     // CommitLock
	Settle  history.Settle        // CommitSettle
}

// Guard is a condition a commit of its kind must satisfy over ground-truth
// facts at its step. Enabled returns "" when the commit was justified, or the
// facts that show it was not.
type Guard struct {
	Name string
	On   CommitKind
	// Says is the guard in words, for the violation.
	Says string
	// Applies reports whether the system promises this at all (a system with
	// no job lock is not held to lock exclusivity).
	Applies func(sut.Spec) bool
	Enabled func(c *run, cm Commit) (facts string)
}

// Guards are the commit guards, in the order they are judged.
var Guards = []Guard{
	{Name: "record_matches_result", On: CommitState, Says: "a SUCCEEDED record, or a FAILED one whose cause is a worker's failure, carries the result the executing worker reported",
		Applies: func(s sut.Spec) bool { return s.Succeeded != "" }, Enabled: recordMatchesResult},
	{Name: "result_of_current_dispatch", On: CommitState, Says: "a move on a worker's result applies a result of the dispatch the job is on: its generation, and its dispatch id unless that id never ran",
		Applies: func(sut.Spec) bool { return true }, Enabled: resultOfCurrentDispatch},
	{Name: "dlq_entry", On: CommitState, Says: "a FAILED or TIMEOUT job has a DLQ entry with that status and the state it left (a timeout's reason names that state's timeout)",
		Applies: func(s sut.Spec) bool { return s.Failed != "" }, Enabled: dlqEntryMatches},
	{Name: "dlq_entry", On: CommitDLQ, Says: "only a job that ended FAILED or TIMEOUT has a DLQ entry",
		Applies: func(s sut.Spec) bool { return s.Failed != "" }, Enabled: dlqEntryOfAFailure},
	{Name: "dlq_true_cause", On: CommitDLQ, Says: "a reason code names the true cause: topic-missing only when the routing in force maps the topic to no pool, requires-unsatisfied only when it maps it and no pool offers the job's requires, tenant-limit only for a capped tenant that reached its cap, invalid-request exactly for a job submitted without a topic",
		Applies: func(s sut.Spec) bool {
			return s.ReasonTopicMissing != "" || s.ReasonRequiresUnsatisfied != "" || s.ReasonTenantLimit != "" ||
				s.ReasonInvalidRequest != ""
		},
		Enabled: dlqTrueCause},
	{Name: "tenant_cap", On: CommitState, Says: "a capped tenant's job is dispatched only by a pass that could have found fewer than the cap of the tenant's jobs active",
		Applies: func(s sut.Spec) bool { return len(s.TenantMaxActive) > 0 && len(s.TenantActive) > 0 },
		Enabled: tenantCapRespected},
	{Name: "invalid_request_refused", On: CommitState, Says: "a job submitted without a topic only ever fails (or is cancelled first)",
		Applies: func(s sut.Spec) bool { return s.ReasonInvalidRequest != "" }, Enabled: invalidRequestRefused},
	{Name: "invalid_request_refused", On: CommitPublish, Says: "a job submitted without a topic is never dispatched",
		Applies: func(s sut.Spec) bool { return s.ReasonInvalidRequest != "" }, Enabled: invalidRequestRefused},
	{Name: "timeout_not_early", On: CommitState, Says: "no TIMEOUT before the configured timeout elapsed in true time since the state was entered",
		Applies: func(s sut.Spec) bool { return s.TimedOut != "" }, Enabled: timeoutNotEarly},
	{Name: "grace_not_early", On: CommitDLQ, Says: "no grace-window failure before the grace window elapsed in true time since the job was first scheduled",
		Applies: func(s sut.Spec) bool { return s.PickGrace > 0 }, Enabled: graceNotEarly},
	{Name: "retry_cap_not_early", On: CommitDLQ, Says: "no retry-cap failure before the cap's attempts were made",
		Applies: func(s sut.Spec) bool { return s.MaxSchedulingRetries > 0 }, Enabled: retryCapNotEarly},
	{Name: "retry_cap_not_late", On: CommitState, Says: "no scheduling pass once the cap's attempts were made (only the publish rollback of the pass that made the last one may count one more)",
		Applies: func(s sut.Spec) bool { return s.MaxSchedulingRetries > 0 }, Enabled: retryCapNotLate},
	{Name: "fenced_write", On: CommitState, Says: "a write fenced by a lock token lands only while that token holds the job's lock in true time",
		Applies: func(s sut.Spec) bool { return s.JobLock }, Enabled: fencedWrite},
	{Name: "lock_exclusive", On: CommitState, Says: "no handler acts on a job after its lock expired in true time while another handler took it and acted",
		Applies: func(s sut.Spec) bool { return s.JobLock }, Enabled: lockExclusive},
	{Name: "lock_exclusive", On: CommitPublish, Says: "no handler acts on a job after its lock expired in true time while another handler took it and acted",
		Applies: func(s sut.Spec) bool { return s.JobLock }, Enabled: lockExclusive},
	{Name: "lock_exclusive", On: CommitLock, Says: "a job's lock is taken only when no other token's lease on it runs in true time",
		Applies: func(s sut.Spec) bool { return s.JobLock }, Enabled: lockTakenFree},
	{Name: "lock_checked_before_publish", On: CommitPublish, Says: "a handler publishes a dispatch only if its last command on the job's lock left it holding the lock (the check before a publish)",
		Applies: func(s sut.Spec) bool { return s.JobLock }, Enabled: lockCheckedBeforePublish},
	{Name: "sweep_takes_stale", On: CommitLock, Says: "a sweep takes the lock only of a job its last scan could list: in the scanned state and untouched for the sweep's staleness in true time",
		Applies: func(s sut.Spec) bool { return len(s.Sweeps) > 0 }, Enabled: sweepTakesStale},
	{Name: "cancel_applied", On: CommitSettle, Says: "a cancel is acked only once the job is terminal (cancelled, or finished before it)",
		Applies: func(s sut.Spec) bool { return s.Cancelled != "" }, Enabled: cancelSettledApplied},
	{Name: "terminal_job_executed_again", On: CommitPublish, Says: "a job that reached a terminal state is never dispatched and run again",
		Applies: func(s sut.Spec) bool { return len(s.Terminal) > 0 }, Enabled: terminalNotRedispatched},
}

// checkRefinement: every commit in the history was enabled by its guards.
func checkRefinement(c *run) {
	for _, cm := range c.commits() {
		for _, g := range Guards {
			if g.On != cm.Kind || !g.Applies(c.in.System) {
				continue
			}
			if facts := g.Enabled(c, cm); facts != "" {
				c.violate(LayerInvariants, g.Name, cm.Job, cm.Step, cm.Time, "%s commit of job %s not enabled: %s; facts: %s",
					cm.Kind, cm.Job, g.Says, facts)
			}
		}
	}
}

// commits lists the history's commits in step order per kind: state changes,
// stored dispatches, and the DLQ entry of each job that ended with one.
func (c *run) commits() []Commit {
	var out []Commit
	for _, s := range c.in.History.States {
		out = append(out, Commit{Kind: CommitState, Step: s.Step, Time: s.Time, Job: s.JobID, State: s})
	}
	for _, p := range c.in.History.Publishes {
		if p.Dispatch && p.Stored() && p.JobID != "" {
			out = append(out, Commit{Kind: CommitPublish, Step: p.Step, Time: p.Time, Job: p.JobID, Publish: p})
		}
	}
	taken := map[string]bool{}
	for _, l := range c.in.History.Locks {
		// A token's first event that holds the lock is its take; a token
		// polls a busy lock under the same value, and renews it later.
		if l.Held && !taken[l.Token] {
			taken[l.Token] = true
			out = append(out, Commit{Kind: CommitLock, Step: l.Step, Time: l.Time, Job: l.JobID, Lock: l})
		}
	}
	for _, s := range c.in.History.Settles {
		if s.Outcome != history.SettleNak {
			out = append(out, Commit{Kind: CommitSettle, Step: s.Step, Time: s.Time, Job: s.JobID, Settle: s})
		}
	}
	for _, id := range c.jobIDs {
		entry, ok := c.in.DLQ[id]
		if !ok {
			continue
		}
		// The entry is written by the same script as the job's last move.
		states := c.jobStates[id]
		last := states[len(states)-1]
		out = append(out, Commit{Kind: CommitDLQ, Step: last.Step, Time: last.Time, Job: id, State: last, DLQ: entry})
	}
	return out
}

// recordMatchesResult: the final record of a job that ended SUCCEEDED, or
// FAILED with the cause a worker's failure report leaves, points at a result
// a worker reported with that outcome for it.
func recordMatchesResult(c *run, cm Commit) string {
	sys := c.in.System
	final, ok := c.in.Final[cm.Job]
	if !ok || final.State != cm.State.To || !c.lastChange(cm) {
		return ""
	}
	var want sut.Outcome
	switch {
	case cm.State.To == sys.Succeeded:
		want = sut.Succeeded
	case cm.State.To == sys.Failed && sys.ReasonWorkerFailed != "" && final.Cause == sys.ReasonWorkerFailed:
		want = sut.Failed
	default:
		return ""
	}
	var reported []string
	for _, r := range c.in.History.Reports {
		if r.JobID != cm.Job || r.Step > cm.Step {
			continue
		}
		if r.Outcome == string(want) && r.ResultPtr == final.ResultPtr {
			return ""
		}
		reported = append(reported, fmt.Sprintf("%s gen=%d %s %q", r.Worker, r.Gen, r.Outcome, r.ResultPtr))
	}
	if len(reported) == 0 {
		reported = []string{"none"}
	}
	return fmt.Sprintf("%s record result_ptr=%q; worker reports before the commit: %s", final.State, final.ResultPtr,
		strings.Join(reported, ", "))
}

// dlqEntryMatches: a job that ended FAILED or TIMEOUT has a DLQ entry with
// that status and the state the job left.
func dlqEntryMatches(c *run, cm Commit) string {
	sys := c.in.System
	final, ok := c.in.Final[cm.Job]
	st := cm.State.To
	if st != sys.Failed && st != sys.TimedOut || !ok || final.State != st || !c.lastChange(cm) {
		return ""
	}
	entry, ok := c.in.DLQ[cm.Job]
	switch {
	case !ok:
		return fmt.Sprintf("ended %s; no DLQ entry", st)
	case entry.Status != st:
		return fmt.Sprintf("ended %s; DLQ entry status %s", st, entry.Status)
	case entry.LastState != cm.State.From:
		return fmt.Sprintf("left %s; DLQ entry last_state %s", history.StateOrNone(cm.State.From), entry.LastState)
	case st == sys.TimedOut && cm.State.From == sys.Dispatched && sys.ReasonDispatchTimeout != "" &&
		entry.ReasonCode != sys.ReasonDispatchTimeout,
		st == sys.TimedOut && cm.State.From == sys.Running && sys.ReasonRunningTimeout != "" &&
			entry.ReasonCode != sys.ReasonRunningTimeout:
		return fmt.Sprintf("timed out from %s; DLQ reason %s", cm.State.From, entry.ReasonCode)
	}
	return ""
}

// dlqEntryOfAFailure: the entry, written with the job's last move, belongs
// to a failure or a timeout (its status is the dlq_entry state guard's).
func dlqEntryOfAFailure(c *run, cm Commit) string {
	if st := cm.State.To; st != c.in.System.Failed && st != c.in.System.TimedOut {
		return fmt.Sprintf("ended %s, yet has a DLQ entry with status %s, reason %s", st, cm.DLQ.Status, cm.DLQ.ReasonCode)
	}
	return ""
}

// dlqTrueCause: reason codes name the true cause. A job submitted without a
// topic fails with the invalid-request code, and only such a job does; the
// tenant-limit code needs a capped tenant that reached its cap
// (tenantCapReached); routing codes name the routing in force when the job
// was last scheduled or when it failed (a rollout between the two may
// justify either), on the replica that acted (one on its own config routes
// by its own).
func dlqTrueCause(c *run, cm Commit) string {
	sys := c.in.System
	code := cm.DLQ.ReasonCode
	job, ok := c.submitted(cm.Job)
	if !ok {
		return ""
	}
	if invalid := sys.ReasonInvalidRequest; invalid != "" {
		switch {
		case job.Topic == "" && code != invalid:
			return fmt.Sprintf("reason %s for a job submitted without a topic; true cause %s", orNone(code), invalid)
		case job.Topic == "":
			return ""
		case code == invalid:
			return fmt.Sprintf("reason %s for a job submitted on topic %q", code, job.Topic)
		}
	}
	if code != "" && code == sys.ReasonTenantLimit {
		return tenantCapReached(c, cm, job)
	}
	if code == "" || code != sys.ReasonTopicMissing && code != sys.ReasonRequiresUnsatisfied {
		return ""
	}
	var seen []string
	picked, _ := c.enteringChange(cm.Job, sys.Scheduled, cm.Step)
	for _, at := range []history.StateChange{picked, cm.State} {
		t := at.Time
		mapped, pools := c.in.History.RoutingOf(group(at.Actor), t).Eligible(job.Topic, job.Requires)
		cause := "pools " + strings.Join(pools, ",") + " eligible"
		switch {
		case !mapped:
			cause = sys.ReasonTopicMissing
		case len(pools) == 0:
			cause = sys.ReasonRequiresUnsatisfied
		}
		if cause == code {
			return ""
		}
		seen = append(seen, fmt.Sprintf("at %s: %s", t, cause))
	}
	return fmt.Sprintf("reason %s for topic %q requires %v; true cause %s", code, job.Topic, job.Requires, strings.Join(seen, ", "))
}

// timeoutNotEarly: a move into TIMEOUT came at least the configured timeout
// after the state it left was entered, in true time. Tolerance: 1 ms of
// timestamp truncation; and for a system that declares it measures on its
// replicas' clocks (clockExcuse), their spread and the time the entering
// write spent between its writer reading its clock and the store applying it
// (a delayed or paused write stamps an earlier time than it lands).
func timeoutNotEarly(c *run, cm Commit) string {
	sys := c.in.System
	if cm.State.To != sys.TimedOut {
		return ""
	}
	var timeout time.Duration
	switch cm.State.From {
	case sys.Dispatched:
		timeout = c.dispatchTimeout(cm.Job)
	case sys.Running:
		timeout = sys.RunningTimeout
	}
	entered, ok := c.enteringChange(cm.Job, cm.State.From, cm.Step)
	if timeout == 0 || !ok {
		return ""
	}
	tolerance := c.clockExcuse() + time.Millisecond
	if c.onReplicaClocks() {
		tolerance += entered.Time - entered.Sent
	}
	if elapsed := cm.Time - entered.Time; elapsed+tolerance < timeout {
		return fmt.Sprintf("entered %s at %s (step %d), timed out at %s: %s in true time, timeout %s, tolerance %s",
			cm.State.From, entered.Time, entered.Step, cm.Time, elapsed, timeout, tolerance)
	}
	return ""
}

// graceNotEarly: a failure with a grace-window reason came at least the
// grace window after the job first entered the scheduled state (its first
// failed pick came no sooner, so this is a bound the engine must meet).
// Tolerance as for timeouts: 1 ms, and the clock excuse of a system that
// declares it measures on its replicas' clocks.
func graceNotEarly(c *run, cm Commit) string {
	sys := c.in.System
	if !contains(sys.GraceReasons, cm.DLQ.ReasonCode) || cm.DLQ.RetriesExhausted {
		return ""
	}
	first, ok := c.firstEntered(cm.Job, sys.Scheduled)
	if !ok {
		return ""
	}
	tolerance := c.clockExcuse() + time.Millisecond
	if elapsed := cm.Time - first.Time; elapsed+tolerance < sys.PickGrace {
		return fmt.Sprintf("reason %s; first scheduled at %s, failed at %s: %s in true time, grace %s, tolerance %s",
			cm.DLQ.ReasonCode, first.Time, cm.Time, elapsed, sys.PickGrace, tolerance)
	}
	return ""
}

// retryCapNotEarly: a job failed with its retries exhausted entered the
// scheduled state at least the cap's number of times. No tolerance: attempts
// are counted, not timed.
func retryCapNotEarly(c *run, cm Commit) string {
	sys := c.in.System
	if !cm.DLQ.RetriesExhausted && cm.DLQ.ReasonCode != sys.RetryCapReason {
		return ""
	}
	if n := c.attempts(cm.Job); n < sys.MaxSchedulingRetries {
		return fmt.Sprintf("reason %s after %d attempts; cap %d", cm.DLQ.ReasonCode, n, sys.MaxSchedulingRetries)
	}
	return ""
}

// retryCapNotLate: a move into the scheduled state that is not a rollback
// of a dispatch starts a scheduling pass, which the system makes only while
// the job's attempts are below the cap. No tolerance: attempts are counted.
func retryCapNotLate(c *run, cm Commit) string {
	sys := c.in.System
	if !sys.Entered(cm.State.From, cm.State.To, sys.Scheduled) || cm.State.From == sys.Dispatched {
		return ""
	}
	made := 0
	for _, s := range c.jobStates[cm.Job] {
		if s.Step >= cm.Step {
			break
		}
		if sys.ChargesAttempt(s.From, s.To) {
			made++
		}
	}
	if made >= sys.MaxSchedulingRetries {
		return fmt.Sprintf("a scheduling pass from %s after %d attempts; cap %d", history.StateOrNone(cm.State.From), made,
			sys.MaxSchedulingRetries)
	}
	return ""
}

// terminalNotRedispatched: the broker stored no dispatch of a job already
// terminal; when it did, the finding counts how often the job then ran again
// from dispatches stored after it ended (a stored copy redelivered to a
// forgetful worker is the worker layer's, counted by exactly-once).
func terminalNotRedispatched(c *run, cm Commit) string {
	term, ok := c.terminalChange(cm.Job)
	if !ok || cm.Step < term.Step || c.firstLatePublish(cm.Job, term.Step) != cm.Step {
		return ""
	}
	var stored, ran int
	for _, p := range c.in.History.Publishes {
		if p.JobID == cm.Job && p.Dispatch && p.Stored() && p.Step > term.Step && !c.pausedStalePublish(p) &&
			!c.heldAcrossTerminal(p, term.Step) {
			stored++
		}
	}
	before := map[string]bool{}
	for _, e := range c.in.History.Executions {
		if e.JobID != cm.Job {
			continue
		}
		if e.Step > term.Step && !before[e.DispatchID] {
			ran++
		}
		before[e.DispatchID] = true
	}
	if stored == 0 && ran == 0 {
		return ""
	}
	return fmt.Sprintf("terminal %s at step %d; then dispatched %d more times and executed %d more times",
		term.To, term.Step, stored, ran)
}

// fencedWrite: the store applied a fenced write only while its token held
// the job's lock. No tolerance: the store's own clock expires the key.
func fencedWrite(c *run, cm Commit) string {
	if cm.State.Token == "" || cm.State.Holder == cm.State.Token {
		return ""
	}
	holder := "no one (expired or released)"
	if cm.State.Holder != "" {
		holder = "token " + short(cm.State.Holder)
	}
	return fmt.Sprintf("%s wrote %s -> %s fenced by token %s; the lock was held by %s", cm.State.Actor,
		history.StateOrNone(cm.State.From), cm.State.To, short(cm.State.Token), holder)
}

// lockExclusive: a handler that took a job's lock and acts after the lock
// expired in true time (paused, slow, its renewals failing) must not overlap
// another handler that took the lock since and acted on the job.
func lockExclusive(c *run, cm Commit) string {
	actor := cm.State.Actor
	if cm.Kind == CommitPublish {
		actor = cm.Publish.Actor
	}
	var mine *history.LockEvent
	for i, l := range c.in.History.Locks {
		if l.Step >= cm.Step {
			break
		}
		if l.JobID == cm.Job && l.Actor == actor {
			mine = &c.in.History.Locks[i]
		}
	}
	if mine == nil || !mine.Held {
		return "" // it holds no lock it knows of: the guard is the store's fence
	}
	if cm.Kind == CommitPublish && c.pausedStalePublish(cm.Publish) {
		return ""
	}
	until := c.leaseUntil(mine.Token, cm.Step)
	if cm.Time <= until {
		return ""
	}
	for _, l := range c.in.History.Locks {
		if l.Step >= cm.Step {
			break
		}
		if l.JobID != cm.Job || !l.Held || l.Token == mine.Token || l.Time < until {
			continue
		}
		if step, ok := c.actedUnder(l, cm.Step); ok {
			return fmt.Sprintf("%s took the lock at %s (token %s), held until %s, acted at %s; %s took it at %s (token %s) and acted at step %d",
				actor, mine.Time, short(mine.Token), until, cm.Time, l.Actor, l.Time, short(l.Token), step)
		}
	}
	return ""
}

// pausedStalePublish is the one excuse for a dispatch stored after its
// publisher's lock ran out: a pause fault froze the publisher's replica after
// the publisher last took or renewed the lock and before that lease ended, and
// no worker ran the copy. No store script can fence a broker; a paused process
// publishes when it wakes, and the worker's fence must refuse the copy. A copy
// that ran, or a late publish without such a pause, is never excused.
func (c *run) pausedStalePublish(p history.PublishRecord) bool {
	var mine *history.LockEvent
	for i, l := range c.in.History.Locks {
		if l.Step >= p.Step {
			break
		}
		if l.JobID == p.JobID && l.Actor == p.Actor && l.Held {
			mine = &c.in.History.Locks[i]
		}
	}
	if mine == nil {
		return false
	}
	until := c.leaseUntil(mine.Token, p.Step)
	if p.Time <= until {
		return false // not stale
	}
	paused := false
	for _, f := range c.in.History.Faults {
		if f.Effect == history.EffectPause && f.Step >= mine.Step && f.Step < p.Step && f.Time <= until &&
			group(f.Actor) == group(p.Actor) {
			paused = true
			break
		}
	}
	if !paused {
		return false
	}
	for _, e := range c.in.History.Executions {
		if e.JobID == p.JobID && e.Gen == p.Gen && e.Step > p.Step {
			return false
		}
	}
	return true
}

// heldAcrossTerminal: the publish was sent while the job was still live and
// a delay fault held it in flight past the job's terminal commit (its
// actor's publish delayed before that commit, with no other publish of the
// actor in between), and no worker ran its generation after it was stored.
// A check before a publish cannot see a commit made while the publish is in
// flight; what the system owes is that the stale copy never runs.
func (c *run) heldAcrossTerminal(p history.PublishRecord, terminal uint64) bool {
	var delayed *history.FaultRecord
	for i, f := range c.in.History.Faults {
		if f.Step >= terminal {
			break
		}
		if f.Point == history.PointPublish && f.Effect == history.EffectDelay && f.Actor == p.Actor {
			delayed = &c.in.History.Faults[i]
		}
	}
	if delayed == nil {
		return false
	}
	for _, q := range c.in.History.Publishes {
		if q.Actor == p.Actor && q.Step > delayed.Step && q.Step < p.Step {
			return false // the delayed publish was another one
		}
	}
	for _, e := range c.in.History.Executions {
		if e.JobID == p.JobID && e.Gen == p.Gen && e.Step > p.Step {
			return false
		}
	}
	return true
}

// lockTakenFree: a token takes a job's lock only when every other token's
// lease on it has ended: by its expiry in true time, or by a command of
// that token that left it without the lock (its release, a renewal that
// found it gone). A lease that ends any other way was deleted under its
// holder. No tolerance: the store's own clock expires the key.
func lockTakenFree(c *run, cm Commit) string {
	type lease struct {
		actor       string
		since, till time.Duration
	}
	leases := map[string]lease{}
	var tokens []string
	for _, l := range c.in.History.Locks {
		if l.Step >= cm.Step {
			break
		}
		if l.JobID != cm.Job {
			continue
		}
		ls, seen := leases[l.Token]
		if !seen {
			tokens = append(tokens, l.Token)
		}
		if l.Held && ls.actor == "" {
			ls.actor, ls.since = l.Actor, l.Time
		}
		if l.Held {
			ls.till = l.Until
		} else {
			ls.till = min(ls.till, l.Time) // a release ends it now; a failed renewal ends nothing
		}
		leases[l.Token] = ls
	}
	for _, tok := range tokens {
		if ls := leases[tok]; tok != cm.Lock.Token && ls.till > cm.Time {
			return fmt.Sprintf("%s took the lock at %s (token %s) while the lease of token %s, taken by %s at %s, ran until %s: the lock was freed under its holder",
				cm.Lock.Actor, cm.Time, short(cm.Lock.Token), short(tok), ls.actor, ls.since, ls.till)
		}
	}
	return ""
}

// leaseUntil is when token's lock expires in true time, as its last take or
// renewal before step left it.
func (c *run) leaseUntil(token string, step uint64) time.Duration {
	var until time.Duration
	for _, l := range c.in.History.Locks {
		if l.Step >= step {
			break
		}
		switch {
		case l.Token != token:
		case l.Held:
			until = l.Until
		default:
			// A release ends a running lease now; a renewal that found the
			// lock gone ends nothing: the lease ran out at its own time.
			until = min(until, l.Time)
		}
	}
	return until
}

// actedUnder reports the first commit on the lock's job by its taker from the
// take to before step.
func (c *run) actedUnder(l history.LockEvent, before uint64) (uint64, bool) {
	for _, s := range c.jobStates[l.JobID] {
		if s.Step > l.Step && s.Step < before && s.Actor == l.Actor {
			return s.Step, true
		}
	}
	for _, p := range c.in.History.Publishes {
		if p.JobID == l.JobID && p.Stored() && p.Step > l.Step && p.Step < before && p.Actor == l.Actor {
			return p.Step, true
		}
	}
	return 0, false
}

func short(token string) string {
	if len(token) > 8 {
		return token[:8]
	}
	return token
}

// firstLatePublish is the step of the job's first stored dispatch after
// step, so a job dispatched again is one finding, not one per copy.
func (c *run) firstLatePublish(job string, step uint64) uint64 {
	for _, p := range c.in.History.Publishes {
		if p.JobID == job && p.Dispatch && p.Stored() && p.Step > step {
			return p.Step
		}
	}
	return 0
}

// terminalChange is the job's first move into a terminal state.
func (c *run) terminalChange(job string) (history.StateChange, bool) {
	for _, s := range c.jobStates[job] {
		if c.in.System.IsTerminal(s.To) {
			return s, true
		}
	}
	return history.StateChange{}, false
}

// lastChange reports whether cm is the job's last state change.
func (c *run) lastChange(cm Commit) bool {
	states := c.jobStates[cm.Job]
	return len(states) > 0 && states[len(states)-1].Step == cm.Step
}

// dispatchTimeout is how long the job may stay dispatched: its topic's
// override, or the run's.
func (c *run) dispatchTimeout(job string) time.Duration {
	if s, ok := c.submitted(job); ok {
		if d := c.in.System.DispatchTimeoutByTopic[s.Topic]; d > 0 {
			return d
		}
	}
	return c.spec.DispatchTimeout
}

// enteringChange is the last change before step that entered state.
func (c *run) enteringChange(job, state string, step uint64) (history.StateChange, bool) {
	var out history.StateChange
	found := false
	for _, s := range c.jobStates[job] {
		if s.Step >= step {
			break
		}
		if c.in.System.Entered(s.From, s.To, state) {
			out, found = s, true
		}
	}
	return out, found
}

// lastEntered is when the job last entered state before step (0 if never).
func (c *run) lastEntered(job, state string, step uint64) time.Duration {
	s, _ := c.enteringChange(job, state, step)
	return s.Time
}

// firstEntered is the job's first change into state.
func (c *run) firstEntered(job, state string) (history.StateChange, bool) {
	for _, s := range c.jobStates[job] {
		if c.in.System.Entered(s.From, s.To, state) {
			return s, true
		}
	}
	return history.StateChange{}, false
}

func (c *run) submitted(job string) (history.SubmittedJob, bool) {
	for _, s := range c.in.History.Submitted {
		if s.JobID == job {
			return s, true
		}
	}
	return history.SubmittedJob{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// onReplicaClocks reports whether the system declares it measures durations
// one process starts and another judges on its replicas' own clocks.
func (c *run) onReplicaClocks() bool { return c.in.System.Clocks == sut.ReplicaClocks }

// clockExcuse is what the timing checks forgive of skew between replicas:
// their widest gap for a system that declares it measures on their clocks,
// nothing for one that measures on the store's (a spread is a flaw a system
// can avoid, not a default tolerance).
func (c *run) clockExcuse() time.Duration {
	if !c.onReplicaClocks() {
		return 0
	}
	return c.in.History.SkewSpread()
}
