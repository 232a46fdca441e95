package adaptercheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
)

// audit gathers, over every world, what the adapter reported, then judges it.
type audit struct {
	spec sut.Spec
	// seen counts the states the store committed; moves the transitions.
	seen  map[string]int
	moves map[[2]string]string // from, to -> an example job
	// outside are states the observer reported that the spec does not list.
	outside map[string]string
	// noResult are jobs that ended in the succeeded state without a result
	// pointer, sameID executions of one job whose dispatches share an id.
	noResult, sameID []string
	emptyID          int
	dispatches       int
	out              []Finding
}

func newAudit(spec sut.Spec) *audit {
	return &audit{spec: spec, seen: map[string]int{}, moves: map[[2]string]string{}, outside: map[string]string{}}
}

func (a *audit) add(s Severity, what, fix string) { a.out = append(a.out, Finding{s, what, fix}) }

func (a *audit) listed(state string) bool {
	for _, s := range a.spec.States {
		if s == state {
			return true
		}
	}
	return false
}

// run reads one world's ground truth.
func (a *audit) run(o *scenarios.Outcome) {
	h := o.Run.History
	for _, c := range h.States {
		if lostAt(o, c.JobID, c.Step) {
			continue // the store went back to an older copy: the environment's move, not the system's
		}
		a.seen[c.To]++
		if c.To != "" && !a.listed(c.To) {
			a.outside[c.To] = c.JobID
		}
		if c.From != "" || c.To != "" {
			if _, ok := a.moves[[2]string{c.From, c.To}]; !ok {
				a.moves[[2]string{c.From, c.To}] = fmt.Sprintf("%s seed %d job %s", o.Scenario, o.Seed, c.JobID)
			}
		}
	}
	for id, job := range o.Run.Final {
		if job.State == a.spec.Succeeded && a.spec.Succeeded != "" && job.ResultPtr == "" && len(a.noResult) < 3 {
			a.noResult = append(a.noResult, fmt.Sprintf("%s seed %d job %s", o.Scenario, o.Seed, id))
		}
	}
	for _, p := range h.Publishes {
		if p.Dispatch {
			a.dispatches++
		}
	}
	byID := map[string]map[int]bool{} // job/dispatch id -> generations
	for _, e := range h.Executions {
		if e.DispatchID == "" {
			a.emptyID++
			continue
		}
		key := e.JobID + "\x00" + e.DispatchID
		if byID[key] == nil {
			byID[key] = map[int]bool{}
		}
		byID[key][e.Gen] = true
		if len(byID[key]) == 2 && len(a.sameID) < 3 {
			a.sameID = append(a.sameID, fmt.Sprintf("%s seed %d job %s (dispatch id %q)", o.Scenario, o.Seed, e.JobID, e.DispatchID))
		}
	}
}

// commands judges what Command said of every store command.
func (a *audit) commands(o *recordingObserver) {
	var locks, admission, scans int
	into := map[string]int{}
	for _, f := range o.facts {
		switch {
		case f.LockKey != "":
			locks++
		case f.Admission:
			admission++
		case f.Scan != "":
			scans++
		case f.Transition:
			into[f.To]++
			if via, ok := a.spec.CompoundSteps[f.To]; ok {
				into[via]++
			}
		}
	}
	s := a.spec
	if s.JobLock && locks == 0 {
		a.add(Error, "the spec says the system has a job lock (JobLock), but Command never named a lock command (LockKey)",
			"return LockKey, Token and LockOp for the lock's take, renew and release; lock fault kinds and lease checks read them")
	}
	if !s.JobLock && locks > 0 {
		a.add(Warning, fmt.Sprintf("Command named %d lock commands, but the spec says the system has no job lock", locks),
			"set Spec.JobLock, or the lock checks and lock fault kinds stay off")
	}
	if s.RunAdmission && admission == 0 {
		a.add(Error, "the spec says the gateway admits workflow runs (RunAdmission), but Command never marked an admission command",
			"set CommandFact.Admission (and RunKey, Reserve, Release, Sweep, RunsOf) for run admission's writes")
	}
	if len(s.Sweeps) > 0 && scans == 0 {
		a.add(Warning, "the spec declares sweeps, but Command never named a sweep's scan (Scan)",
			"return Scan with the state a sweep lists, or sweep_takes_stale judges nothing")
	}
	for _, role := range []struct{ name, state string }{{"Dispatched", s.Dispatched}, {"Scheduled", s.Scheduled},
		{"Running", s.Running}} {
		if role.state != "" && a.seen[role.state] > 0 && into[role.state] == 0 {
			a.add(Warning, fmt.Sprintf("jobs entered %s (the %s role), but Command never reported a write into it", role.state, role.name),
				"return Transition with From and To for the script that writes it: fault kinds aimed at that write never fire otherwise")
		}
	}
	for _, what := range sortedKeys(o.unnamed) {
		a.add(Warning, fmt.Sprintf("%d script runs (%s) are not named by Observer.Scripts", o.unnamed[what], what),
			"name every script the system runs in Observer.Scripts (name to its SHA1), so Command can tell them apart")
	}
}

// workerGate holds Spec.WorkerGate, which decides whether fault kinds aim
// at a worker's store commands, to the worker protocol it describes.
func (a *audit) workerGate(sys sut.System) {
	_, has := sys.Worker().(sut.IdempotentConsumer)
	switch {
	case has && a.spec.WorkerGate == sut.GateNone:
		a.add(Warning, "the worker protocol has a dispatch gate (IdempotentConsumer), but Spec.WorkerGate says none",
			"set Spec.WorkerGate to GateRead (a fence that reads) or GateClaim (a consumer that writes its claim), so fault kinds aim at the gate's store commands")
	case !has && a.spec.WorkerGate != sut.GateNone:
		a.add(Error, fmt.Sprintf("Spec.WorkerGate is %q, but the worker protocol has no dispatch gate (IdempotentConsumer)", a.spec.WorkerGate),
			"implement sut.IdempotentConsumer on the worker protocol, or leave Spec.WorkerGate as GateNone")
	}
}

// findings judges what the worlds showed, most serious first.
func (a *audit) findings() []Finding {
	s := a.spec
	for _, st := range sortedKeys(a.outside) {
		a.add(Error, fmt.Sprintf("the observer reported state %q (job %s), which the spec does not list", st, a.outside[st]),
			"list every state in Spec.States, or read the job's state from the field the system writes")
	}
	for _, st := range s.States {
		if a.seen[st] == 0 && st != "" {
			a.add(Warning, fmt.Sprintf("no world saw a job in state %s%s", st, roleOf(s, st)),
				"if the system enters it, Job does not report it; if it never does, take it out of the spec")
		}
	}
	var bad, resurrected []string
	for _, m := range sortedMoves(a.moves) {
		move := fmt.Sprintf("%s -> %s (%s)", orNone(m[0]), m[1], a.moves[m])
		switch {
		case s.IsTerminal(m[0]):
			resurrected = append(resurrected, move) // allowed by Transitions or not
		case m[0] != "" && !s.Allowed(m[0], m[1]):
			bad = append(bad, move)
		}
	}
	if len(resurrected) > 0 {
		// Never advise a spec that admits what a contract forbids.
		a.add(Error, "the store moved jobs out of a terminal state: "+strings.Join(resurrected, "; "),
			"if the state is not terminal, take it out of Spec.Terminal; if it is, keep it final in the system's writes (no_resurrection fails this); "+
				"never widen Spec.Transitions to allow it, which would hide the bug")
	}
	if len(bad) > 0 {
		a.add(Error, "the store committed moves the spec's Transitions do not allow: "+strings.Join(bad, "; "),
			"make Spec.Transitions (and CompoundSteps, for a script that writes two states at once) say what the system does")
	}
	if len(a.noResult) > 0 {
		a.add(Error, fmt.Sprintf("jobs ended %s without a result pointer: %s", s.Succeeded, strings.Join(a.noResult, "; ")),
			"store the result pointer the worker reported with the job, and read it in Job (JobFact.ResultPtr): the result checks compare it")
	}
	if a.dispatches > 0 && s.Dispatched != "" && a.seen[s.Dispatched] == 0 {
		a.add(Error, fmt.Sprintf("%d dispatches were published, but no job ever entered %s, the spec's Dispatched state", a.dispatches, s.Dispatched),
			"set Spec.Dispatched to the state a job is in while a worker may run it")
	}
	if a.emptyID > 0 {
		a.add(Error, fmt.Sprintf("%d executions ran a dispatch with no id", a.emptyID),
			"DecodeDispatch must return Dispatch.ID: an idempotent consumer runs an id once, and the checkers tell executions apart by it")
	}
	if len(a.sameID) > 0 {
		a.add(Error, "dispatches of different generations of one job carried one id: "+strings.Join(a.sameID, "; "),
			"derive Dispatch.ID from the job and its dispatch generation, or a double execution looks like a redelivery")
	}
	sort.SliceStable(a.out, func(i, j int) bool { return a.out[i].Severity == Error && a.out[j].Severity != Error })
	return a.out
}

// lostAt reports whether the state change of job at step is a store loss
// putting back an older copy of it.
func lostAt(o *scenarios.Outcome, job string, step uint64) bool {
	for _, l := range o.Run.History.StoreLosses {
		if l.Step == step && l.Affects(job) {
			return true
		}
	}
	return false
}

func roleOf(s sut.Spec, st string) string {
	var roles []string
	for _, r := range []struct{ name, state string }{{"dispatched", s.Dispatched}, {"running", s.Running},
		{"scheduled", s.Scheduled}, {"retrying", s.Retrying}, {"succeeded", s.Succeeded}, {"failed", s.Failed},
		{"cancelled", s.Cancelled}, {"timed out", s.TimedOut}} {
		if r.state == st {
			roles = append(roles, r.name)
		}
	}
	if len(roles) == 0 {
		return ""
	}
	return " (the spec's " + strings.Join(roles, " and ") + " state: the checks of that role judge nothing)"
}

func sortedMoves(m map[[2]string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
