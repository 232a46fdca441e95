package checker

import (
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// The contract any dispatcher owes its workers' results and executions,
// whatever its states are called: a result moves only the dispatch that
// produced it (result_of_current_dispatch, a commit guard), a success that
// reached the system is what the job ends on (success_result_kept), and two
// dispatches of one job never run at once (no_concurrent_dispatches). Each is
// judged from ground truth: the records the store committed (with the
// dispatch and result each one carries), the results workers sent, the
// handlers' settles of those results, and the workers' execution intervals.

// appliedResult reports whether the state change s applied a worker's
// result: its record carries a result pointer that the change put there (the
// record before it pointed elsewhere), or that the result message its writer
// was handling carried (a result applied again over its own pointer). A
// store that went back to an older copy of the job applied nothing.
func (c *run) appliedResult(s history.StateChange) bool {
	if s.ResultPtr == "" || c.restored(s) {
		return false
	}
	if prev, _ := c.changeBefore(s.JobID, s.Step); prev.ResultPtr != s.ResultPtr {
		return true
	}
	st, ok := c.handling(s.Actor, s.Step)
	return ok && st.ResultPtr == s.ResultPtr
}

// restored reports whether the change s is the store going back to an
// older copy of the job (a loss of acknowledged writes), not a write.
func (c *run) restored(s history.StateChange) bool {
	for _, l := range c.in.History.StoreLosses {
		if l.Step == s.Step && l.Affects(s.JobID) {
			return true
		}
	}
	return false
}

// changeBefore is the job's last state change before step: its record says
// which dispatch the job was on when a change at step was written. None (the
// zero change) before the job's first.
func (c *run) changeBefore(job string, step uint64) (history.StateChange, bool) {
	var out history.StateChange
	found := false
	for _, s := range c.jobStates[job] {
		if s.Step >= step {
			break
		}
		out, found = s, true
	}
	return out, found
}

// handling is the message the delivery actor was handling at step: its
// first settle at or after step (a delivery actor handles one message, and
// settles it when its handler returns). False when the actor is no delivery
// or never settled (its process died first).
func (c *run) handling(actor string, step uint64) (history.Settle, bool) {
	if c.settles == nil {
		c.settles = map[string][]history.Settle{}
		for _, s := range c.in.History.Settles {
			c.settles[s.Actor] = append(c.settles[s.Actor], s)
		}
	}
	for _, s := range c.settles[actor] {
		if s.Step >= step {
			return s, true
		}
	}
	return history.Settle{}, false
}

// resultOfCurrentDispatch: a commit that applied a worker's result applied a
// result of the dispatch the job was on when it was written: the result's
// generation is the job's, and so is its dispatch id, unless the job's
// dispatch id had not run (a re-pick of the same generation whose copy the
// broker dropped or never stored: the result's dispatch was the generation's
// only run) or the generation's copies are an uncovered re-publish (an
// ambiguous publish nothing de-duplicates, Spec.ExactlyOnceUncovered: its
// copies run as they come, and either result is the generation's). The
// result is the report whose message the writer was handling, or any report
// of the pointer written when that is unknown. A result no worker sent is
// record_matches_result's to judge.
func resultOfCurrentDispatch(c *run, cm Commit) string {
	s := cm.State
	if !c.appliedResult(s) {
		return ""
	}
	cur, _ := c.changeBefore(s.JobID, s.Step)
	var from []string
	for _, r := range c.justifying(s) {
		if r.Gen == cur.Gen && (r.DispatchID == cur.DispatchID || cur.DispatchID == "") {
			return ""
		}
		ran, ok := c.executedBefore(s.JobID, cur.DispatchID, s.Step)
		if r.Gen == cur.Gen && (!ok || c.uncoveredDispatches()[dispatchKey{s.JobID, r.Gen}]) {
			return ""
		}
		how := "had not run"
		if ok {
			how = fmt.Sprintf("ran on %s from %s (step %d)", ran.Worker, ran.Time, ran.Step)
		}
		from = append(from, fmt.Sprintf("%s's %s of dispatch %d (id %s) at %s; the job was on dispatch %d (id %s), which %s",
			r.Worker, r.Outcome, r.Gen, orNone(r.DispatchID), r.Time, cur.Gen, orNone(cur.DispatchID), how))
	}
	if len(from) == 0 {
		return ""
	}
	return fmt.Sprintf("%s moved %s -> %s on result %q: %s", s.Actor, history.StateOrNone(s.From), s.To, s.ResultPtr,
		from[0])
}

// justifying are the reports that may have justified the result commit s:
// those its writer was handling (by message digest), or, where that is not
// known, every report of the result pointer s wrote, sent before s.
func (c *run) justifying(s history.StateChange) []history.WorkerReport {
	var all, handled []history.WorkerReport
	h, ok := c.handling(s.Actor, s.Step)
	for _, r := range c.reportsOf(s.JobID) {
		if r.ResultPtr != s.ResultPtr || r.Step > s.Step {
			continue
		}
		all = append(all, r)
		if ok && h.Message != 0 && r.Message == h.Message {
			handled = append(handled, r)
		}
	}
	if len(handled) > 0 {
		return handled
	}
	return all
}

// executedBefore is the first execution of the job's dispatch id before step.
func (c *run) executedBefore(job, dispatchID string, step uint64) (history.Execution, bool) {
	if dispatchID == "" {
		return history.Execution{}, false
	}
	for _, e := range c.executionsOf(job) {
		if e.Step >= step {
			break
		}
		if e.DispatchID == dispatchID {
			return e, true
		}
	}
	return history.Execution{}, false
}

// reportsOf are the job's worker reports in step order, indexed on first use.
func (c *run) reportsOf(job string) []history.WorkerReport {
	if c.reports == nil {
		c.reports = map[string][]history.WorkerReport{}
		for _, r := range c.in.History.Reports {
			c.reports[r.JobID] = append(c.reports[r.JobID], r)
		}
	}
	return c.reports[job]
}

// executionsOf are the job's executions in step order, indexed on first use.
func (c *run) executionsOf(job string) []history.Execution {
	if c.executions == nil {
		c.executions = map[string][]history.Execution{}
		for _, e := range c.in.History.Executions {
			c.executions[e.JobID] = append(c.executions[e.JobID], e)
		}
	}
	return c.executions[job]
}

// resultKey names the results of one dispatch: its job, generation and
// result pointer (one per dispatch id).
type resultKey struct {
	job, ptr string
	gen      int
}

// checkSuccessKept: a job whose dispatch succeeded on a worker, and whose
// success the system settled for good (a handler acked the result message,
// or acked and dropped it), ends in the spec's Succeeded state. Excused, each
// only as far as it reaches:
//   - the job left that dispatch before the handler settled the success: it
//     was already terminal (cancelled, timed out, failed) or on a later
//     generation, by a commit that was not this success applied (then the
//     result was stale or late, and ignoring it is right);
//   - that commit applied another result of the same dispatch (the worker
//     also reported another outcome for it: either may win);
//   - the store forgot writes of the job (the environment layer).
//
// A result the handler asked to see again (NAK), or never settled before the
// run stopped, did not reach the system for good: liveness judges the job.
func checkSuccessKept(c *run) {
	sys := c.in.System
	if sys.Succeeded == "" {
		return
	}
	outcomes := map[resultKey]map[string]bool{}
	for _, r := range c.in.History.Reports {
		k := resultKey{r.JobID, r.ResultPtr, r.Gen}
		if outcomes[k] == nil {
			outcomes[k] = map[string]bool{}
		}
		outcomes[k][r.Outcome] = true
	}
	reported := map[string]bool{}
	for _, r := range c.in.History.Reports {
		final, ok := c.in.Final[r.JobID]
		if r.Outcome != string(sut.Succeeded) || r.ResultPtr == "" || !ok || final.State == sys.Succeeded || reported[r.JobID] {
			continue
		}
		k := resultKey{r.JobID, r.ResultPtr, r.Gen}
		settle, ok := c.settledReport(r)
		if !ok {
			continue
		}
		left, ok := c.leftDispatch(k, settle.Step)
		switch {
		case !ok:
			cur, _ := c.changeBefore(k.job, settle.Step+1)
			c.violate(LayerInvariants, "success_result_kept", k.job, settle.Step, settle.Time,
				"job %s's dispatch %d (id %s) succeeded on %s (result %q at %s); %s %s the result at %s while the job was %s on that dispatch; the job ended %s",
				k.job, k.gen, orNone(r.DispatchID), r.Worker, k.ptr, r.Time, settle.Actor, settledHow(settle), settle.Time,
				history.StateOrNone(cur.To), history.StateOrNone(final.State))
		case left.To != sys.Succeeded && c.appliedResult(left) && left.ResultPtr == k.ptr && c.appliedThis(left, r, outcomes[k]):
			c.violate(LayerInvariants, "success_result_kept", k.job, left.Step, left.Time,
				"job %s's dispatch %d (id %s) succeeded on %s (result %q at %s); %s applied that success as %s -> %s; the job ended %s",
				k.job, k.gen, orNone(r.DispatchID), r.Worker, k.ptr, r.Time, left.Actor, history.StateOrNone(left.From),
				left.To, history.StateOrNone(final.State))
		default:
			// The job was past this dispatch before its success was settled,
			// by a commit that did not apply it.
			continue
		}
		reported[r.JobID] = true
	}
}

// appliedThis reports whether the commit left, which wrote the pointer of
// success report r, applied r itself: its writer was handling r's message,
// or (its message unknown) the dispatch reported no other outcome.
func (c *run) appliedThis(left history.StateChange, r history.WorkerReport, outcomes map[string]bool) bool {
	if h, ok := c.handling(left.Actor, left.Step); ok && h.Message != 0 && r.Message != 0 {
		return h.Message == r.Message
	}
	return len(outcomes) == 1
}

// settledReport is the first settle, after the worker sent report r, that a
// handler gave its message for good: an ack, or an ack that dropped it.
// Without message digests (a hand-made history), any message of r's job,
// generation and result pointer.
func (c *run) settledReport(r history.WorkerReport) (history.Settle, bool) {
	for _, s := range c.in.History.Settles {
		if s.Step <= r.Step || s.JobID != r.JobID || s.Outcome == history.SettleNak {
			continue
		}
		if r.Message != 0 && s.Message == r.Message || r.Message == 0 && s.ResultPtr == r.ResultPtr && s.Gen == r.Gen {
			return s, true
		}
	}
	return history.Settle{}, false
}

// leftDispatch is the job's first change at or before step (a handler's
// commits come before its settle at the same step) that took it past the
// dispatch of results k: into a terminal state, or onto another generation
// once it had been on k's.
func (c *run) leftDispatch(k resultKey, step uint64) (history.StateChange, bool) {
	on := false
	for _, s := range c.jobStates[k.job] {
		if s.Step > step {
			break
		}
		if c.in.System.IsTerminal(s.To) || on && s.Gen != k.gen {
			return s, true
		}
		on = on || s.Gen == k.gen
	}
	return history.StateChange{}, false
}

func settledHow(s history.Settle) string {
	if s.Outcome == history.SettleDrop {
		return "dropped"
	}
	return "acked"
}

// checkNoConcurrentDispatches: two dispatches of one job (another generation,
// or another dispatch id of the same one) never run at the same time in true
// time: a worker starts one only after every worker that ran another stopped
// (finished its work, or its process crashed). One stored dispatch run twice
// is not two dispatches (exactly_once_execution judges the worker that ran it
// again). Excused only: the copies of one generation that exactly-once counts
// as an uncovered re-publish (an ambiguous publish in a world where nothing
// de-duplicates it, Spec.ExactlyOnceUncovered), which run as they come.
func checkNoConcurrentDispatches(c *run) {
	uncovered := c.uncoveredDispatches()
	var jobs []string
	seen := map[string]bool{}
	for _, e := range c.in.History.Executions {
		if !seen[e.JobID] {
			seen[e.JobID] = true
			jobs = append(jobs, e.JobID)
		}
	}
	end := c.in.History.End
	for _, job := range jobs {
		runs := c.executionsOf(job) // in step order: each starts after those before it
		for j := 1; j < len(runs); j++ {
			b := runs[j]
			for _, a := range runs[:j] {
				if a.Gen == b.Gen && (a.DispatchID == b.DispatchID || uncovered[dispatchKey{job, a.Gen}]) {
					continue
				}
				if a.EndStep != 0 && a.EndStep < b.Step {
					continue // a stopped before b started
				}
				if c.redispatchedAfterLease(job, a.Gen, b.Gen) {
					continue
				}
				still := fmt.Sprintf("was still running when the run stopped at %s", end)
				if a.EndStep != 0 {
					still = fmt.Sprintf("ran until %s (step %d)", a.End, a.EndStep)
					if a.Crashed {
						still += ", when its worker crashed"
					}
				}
				c.violate(LayerInvariants, "no_concurrent_dispatches", job, b.Step, b.Time,
					"job %s: %s started dispatch %d (id %s) at %s while %s's dispatch %d (id %s), started at %s (step %d), %s",
					job, b.Worker, b.Gen, orNone(b.DispatchID), b.Time, a.Worker, a.Gen, orNone(a.DispatchID), a.Time, a.Step, still)
				break
			}
		}
	}
}

// redispatchedAfterLease: the spec allows a dispatch to run beside a later
// one (Spec.RedispatchAfterLease), and the later generation entered the
// dispatched state a whole lease (the job's dispatch timeout) after the
// earlier one did, in true time. Nothing shorter is excused.
func (c *run) redispatchedAfterLease(job string, earlier, later int) bool {
	if !c.in.System.RedispatchAfterLease || earlier == later {
		return false
	}
	var from, to time.Duration
	var haveFrom, haveTo bool
	for _, s := range c.jobStates[job] {
		if !c.in.System.Entered(s.From, s.To, c.in.System.Dispatched) {
			continue
		}
		switch {
		case s.Gen == earlier && !haveFrom:
			from, haveFrom = s.Time, true
		case s.Gen == later && !haveTo:
			to, haveTo = s.Time, true
		}
	}
	return haveFrom && haveTo && to-from >= c.dispatchTimeout(job)
}

// uncoveredDispatches are the generations whose repeated stored copies
// exactly-once counts as uncovered re-publishes, not findings.
// Built on first use.
func (c *run) uncoveredDispatches() map[dispatchKey]bool {
	if c.uncoveredGens != nil {
		return c.uncoveredGens
	}
	c.uncoveredGens = map[dispatchKey]bool{}
	stored, keys := c.storedDispatches()
	for _, k := range keys {
		if ps := stored[k]; len(ps) > 1 && c.uncovered(ps) {
			c.uncoveredGens[k] = true
		}
	}
	return c.uncoveredGens
}
