package checker

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dispatchsim/dispatchsim/history"
)

// checkAdmissionContract holds run admission to what it promises besides
// one run per key (checkRunAdmission) and keys that never stay blocked
// (checkRunKeysLive), each from ground truth:
//   - run_request_refused: a start the system's limits refuse gets 400 or
//     413, and only such a start does.
//   - workflow_registration: a registration's reply agrees with the owner
//     the store holds: taken by another org is a conflict, an empty id is
//     invalid.
//   - run_workflow_owner: a start for a workflow its org had registered is
//     never 404, and one for a workflow that is not its org's never admitted.
//   - admission_error_without_fault: a 500 to a start, an error to a
//     registration or a sweep only when a store command of that request
//     failed.
//   - reservation_reclaimed_fresh: the sweeper removes, and a retry takes
//     over, only a reservation older than the stale period in true time.
//   - sweep_count: the sweeper reports the reservations it removed.
//   - admission_metrics: the admission's counters agree with the replies
//     clients saw and the cleanups the store saw fail.
//   - run_limit: no org has more runs active than its limit, and one set to
//     no limit is never turned away with 429.
//   - run_key_foreign: a key holding a value another writer left is refused
//     as used, and the value stays.
//   - run_conflict_justified: a 409 mismatch only when another intent was
//     sent with the key, a 409 used only for another writer's value.
func checkAdmissionContract(c *run) {
	if !c.in.System.RunAdmission {
		return
	}
	checkRunRequests(c)
	checkWorkflowRegistrations(c)
	checkRunWorkflowOwner(c)
	checkUnlimitedOrgs(c)
	checkActiveRuns(c)
	checkForeignKeys(c)
	checkConflictsJustified(c)
	checkAdmissionErrors(c)
	checkReservationsReclaimedStale(c)
	checkSweepCounts(c)
	checkAdmissionMetrics(c)
}

// startRuns are the run starts in the history.
func (c *run) startRuns() []history.ClientOp {
	var out []history.ClientOp
	for _, op := range c.in.History.Ops {
		if op.Kind == history.OpStartRun {
			out = append(out, op)
		}
	}
	return out
}

// refusals are the statuses a start must get for what is wrong with it as a
// request, before the store is asked; none for a well-formed start. A start
// that names neither org nor workflow was recorded without them and is not
// judged.
func (c *run) refusals(op history.ClientOp) (statuses []int, why []string) {
	lim := c.in.System.RunRequests
	if lim.MaxBodyBytes == 0 || op.Org == "" && op.Workflow == "" {
		return nil, nil
	}
	size := max(op.InputBytes, len(op.Input))
	whole := size == len(op.Input) // Input holds the whole body
	add := func(status int, reason string) {
		statuses = append(statuses, status)
		why = append(why, reason)
	}
	if op.Org == "" {
		add(400, "no org")
	}
	if len(op.Key) > lim.MaxKeyBytes {
		add(400, "a key of "+strconv.Itoa(len(op.Key))+" bytes")
	}
	if size > lim.MaxBodyBytes {
		add(413, "a body of "+strconv.Itoa(size)+" bytes")
	} else if whole && !jsonObject(op.Input) {
		add(400, "a body that is not a JSON object")
	}
	return statuses, why
}

// jsonObject reports whether body is one JSON object.
func jsonObject(body string) bool {
	b := bytes.TrimSpace([]byte(body))
	return json.Valid(b) && len(b) > 0 && b[0] == '{'
}

// checkRunRequests: invalid starts are refused with the status promised, and
// valid ones never with 400 or 413. An unanswered start says nothing.
func checkRunRequests(c *run) {
	for _, op := range c.startRuns() {
		if op.Status == 0 {
			continue
		}
		want, why := c.refusals(op)
		switch {
		case len(want) > 0 && !slices.Contains(want, op.Status):
			c.violate(LayerInvariants, "run_request_refused", op.Key, op.RetStep, op.Return,
				"a start with %s got %d, not %v", strings.Join(why, " and "), op.Status, want)
		case len(want) == 0 && (op.Status == 400 || op.Status == 413) && (op.Org != "" || op.Workflow != ""):
			c.violate(LayerInvariants, "run_request_refused", op.Key, op.RetStep, op.Return,
				"a well-formed start of %s for %s (key %s, %d bytes) was refused with %d", op.Workflow, op.Org,
				shortKey(op.Key), max(op.InputBytes, len(op.Input)), op.Status)
		}
	}
}

func shortKey(key string) string {
	if len(key) > 40 {
		return key[:40] + "…"
	}
	return key
}

// storeMayHaveForgotten reports whether a store loss may have undone writes
// made before t (the store came back as it was at the loss's Since).
func (c *run) storeMayHaveForgotten(t time.Duration) bool {
	for _, l := range c.in.History.StoreLosses {
		if l.Since < t {
			return true
		}
	}
	return false
}

// checkWorkflowRegistrations: each registration's reply agrees with the
// workflow's owner in the store at the end (a workflow is registered once
// and never changes hands): ok only for the owner, conflict only for
// another org, invalid exactly for an empty org or id.
func checkWorkflowRegistrations(c *run) {
	owners := c.in.Admission.Workflows
	for _, op := range c.in.History.Ops {
		if op.Kind != history.OpRegisterWorkflow || op.Unknown {
			continue
		}
		owner := owners[op.Workflow]
		empty := op.Org == "" || op.Workflow == ""
		var wrong string
		switch {
		case empty && op.Output != history.RegisterInvalid:
			wrong = "an empty org or workflow id must be refused as invalid"
		case empty:
		case op.Output == history.RegisterInvalid:
			wrong = "both ids were given"
		case c.storeMayHaveForgotten(op.Return):
		case op.Output == history.RegisterOK && owner != op.Org:
			wrong = "the store says the workflow is " + ownerOrNone(owner) + "'s"
		case op.Output == history.RegisterConflict && (owner == "" || owner == op.Org):
			wrong = "the store says the workflow is " + ownerOrNone(owner) + "'s"
		}
		if wrong != "" {
			c.violate(LayerInvariants, "workflow_registration", op.Workflow, op.RetStep, op.Return,
				"registering workflow %q for org %q answered %s, but %s", op.Workflow, op.Org, op.Output, wrong)
		}
	}
}

func ownerOrNone(org string) string {
	if org == "" {
		return "nobody"
	}
	return org
}

// checkRunWorkflowOwner: tenants stay apart. A well-formed start is never
// answered 404 once its org registered the workflow, and never admitted for
// a workflow that is not its org's.
func checkRunWorkflowOwner(c *run) {
	h := c.in.History
	registered := map[[2]string]uint64{} // org, workflow -> step of the first ok
	for _, op := range h.Ops {
		if op.Kind == history.OpRegisterWorkflow && op.Output == history.RegisterOK {
			k := [2]string{op.Org, op.Workflow}
			if _, ok := registered[k]; !ok {
				registered[k] = op.RetStep
			}
		}
	}
	owners := c.in.Admission.Workflows
	for _, op := range c.startRuns() {
		if want, _ := c.refusals(op); len(want) > 0 || op.Org == "" || c.storeMayHaveForgotten(op.Return) {
			continue
		}
		at, ok := registered[[2]string{op.Org, op.Workflow}]
		switch {
		case op.Status == 404 && ok && at < op.CallStep:
			c.violate(LayerInvariants, "run_workflow_owner", op.Key, op.RetStep, op.Return,
				"a start of workflow %s for org %s got 404, though the org registered it at step %d", op.Workflow, op.Org, at)
		case op.Status == 200 && owners[op.Workflow] != op.Org:
			c.violate(LayerInvariants, "run_workflow_owner", op.Key, op.RetStep, op.Return,
				"a start of workflow %s for org %s was admitted (run %s), but the workflow is %s's", op.Workflow, op.Org,
				op.Output, ownerOrNone(owners[op.Workflow]))
		}
	}
}

// storeFaultBy reports whether a store fault fired on an actor of group
// between two steps: the only way a store command of the simulation fails.
func (c *run) storeFaultBy(group string, from, to uint64) bool {
	for _, f := range c.in.History.Faults {
		if f.Step >= from && f.Step <= to && f.Point == history.PointRedis && strings.HasPrefix(f.Actor, group+"/") {
			return true
		}
	}
	return false
}

// checkAdmissionErrors: a run start answered 500, a registration, a sweep,
// a run's completion or a set-up step that failed, each had a store command
// fail under it. A 503 can also mean the org's admission was busy (its
// holder may have died holding it), but only after waiting its turn for
// RunAdmissionWait: a sooner 503 needs a fault too.
func checkAdmissionErrors(c *run) {
	for _, op := range c.in.History.Ops {
		var group, what string
		switch {
		case op.Kind == history.OpStartRun && op.Status == 500:
			group, what = "gateway", "a start answered 500"
		case op.Kind == history.OpStartRun && op.Status == 503 && op.Return-op.Call < c.in.System.RunAdmissionWait:
			group, what = "gateway", "a start answered 503 after "+(op.Return-op.Call).String()+
				", sooner than a busy admission gives up ("+c.in.System.RunAdmissionWait.String()+")"
		case op.Kind == history.OpRegisterWorkflow && op.Output == history.RegisterError:
			group, what = "clients", "registering workflow "+op.Workflow+" failed"
		case op.Kind == history.OpSweep && op.Unknown:
			group, what = "sweeper", "a sweep of stale reservations failed"
		case op.Kind == history.OpCompleteRun && op.Unknown && !c.storeMayHaveForgotten(op.Return):
			group, what = "workflow-engine", "completing run "+op.Key+" failed"
		case (op.Kind == history.OpSetRunLimit || op.Kind == history.OpPlantRunKey) && op.Unknown:
			group, what = "clients", string(op.Kind)+" "+op.Key+" failed"
		default:
			continue
		}
		if !c.storeFaultBy(group, op.CallStep, op.RetStep) {
			c.violate(LayerInvariants, "admission_error_without_fault", op.Key, op.RetStep, op.Return,
				"%s (steps %d-%d) though no store command of it failed", what, op.CallStep, op.RetStep)
		}
	}
}

// staleSlack covers the millisecond timestamps the reservation index keeps.
const staleSlack = time.Millisecond

// checkReservationsReclaimedStale: a reservation is taken from its holder
// (removed by the sweeper, or replaced by a takeover) only once it is older
// than the stale period in true time, counted from when its write was
// issued (its writer stamped it then; a delay before the store applied it
// does not make it younger).
func checkReservationsReclaimedStale(c *run) {
	// The promise, not the configuration the system reports about itself.
	stale := c.in.System.StaleReservationAfter
	if stale <= 0 {
		stale = c.in.Admission.StaleAfter
	}
	if stale <= 0 {
		return
	}
	type written struct {
		value string
		sent  time.Duration
	}
	last := map[string]written{}
	for _, r := range c.in.History.RunKeys {
		reclaimed := r.Op == history.RunKeySweep && r.Removed() || r.Op == history.RunKeyReserve && r.Replaced()
		if w, ok := last[r.Key]; reclaimed && ok && w.value == r.Before {
			if age := r.Time - w.sent; age+staleSlack < stale {
				how := "took over"
				if r.Op == history.RunKeySweep {
					how = "swept"
				}
				c.violate(LayerInvariants, "reservation_reclaimed_fresh", r.Key, r.Step, r.Time,
					"%s %s the reservation of key %s %s after it was written, before it was stale (%s)", r.Actor, how,
					r.Key, age, stale)
			}
		}
		switch {
		case r.Wrote() && r.Op == history.RunKeyReserve:
			last[r.Key] = written{value: r.After, sent: r.Sent}
		case r.Wrote():
			delete(last, r.Key) // another writer's value is no reservation
		}
	}
}

// checkSweepCounts: each sweep reports the reservations its commands removed
// in the store; a sweep that failed may have removed one more than it
// reports (the reply of the last was lost).
func checkSweepCounts(c *run) {
	h := c.in.History
	for _, op := range h.Ops {
		if op.Kind != history.OpSweep {
			continue
		}
		reported, err := strconv.Atoi(op.Output)
		if err != nil {
			continue
		}
		removed := 0
		for _, r := range h.RunKeys {
			if r.Op == history.RunKeySweep && r.Removed() && r.Step >= op.CallStep && r.Step <= op.RetStep {
				removed++
			}
		}
		if reported == removed || op.Unknown && reported == removed-1 {
			continue
		}
		c.violate(LayerInvariants, "sweep_count", "", op.RetStep, op.Return,
			"a sweep (steps %d-%d) reported %d stale reservations removed; the store saw it remove %d", op.CallStep,
			op.RetStep, reported, removed)
	}
}

// checkAdmissionMetrics compares the gateway's counters with ground truth.
// Every reply is counted when it is sent, so per status code the counter is
// at least the replies clients saw and at most that plus the starts that
// went unanswered (the gateway may answer after the client gave up). A
// cleanup failure is counted right after the command that failed, with no
// yield between: the counter equals the cleanups the store saw fail.
func checkAdmissionMetrics(c *run) {
	g := c.in.GatewayMetrics
	if g == nil {
		return
	}
	m := c.in.System.Metrics
	end := c.in.History.End
	if name := m.RejectedRuns; name != "" {
		counted := counterByLabel(g, name, "code")
		seen, unanswered := map[string]int{}, 0
		for _, op := range c.startRuns() {
			if op.Status == 0 {
				unanswered++
				continue
			}
			seen[strconv.Itoa(op.Status)]++
		}
		codes := slices.Sorted(maps.Keys(seen))
		for code := range counted {
			if _, ok := seen[code]; !ok {
				codes = append(codes, code)
			}
		}
		for _, code := range codes {
			got := counted[code]
			if got < seen[code] || got > seen[code]+unanswered {
				c.violate(LayerInvariants, "admission_metrics", "", 0, end,
					"%s{code=%q}=%d but clients saw %d such replies (and %d starts went unanswered)", name, code, got,
					seen[code], unanswered)
			}
		}
	}
	if name := m.CleanupFailures; name != "" {
		failed := 0
		for _, r := range c.in.History.RunKeys {
			if r.Op == history.RunKeyRelease && r.Failed {
				failed++
			}
		}
		if got := counterByLabel(g, name, "")[""]; got != failed {
			c.violate(LayerInvariants, "admission_metrics", "", 0, end,
				"%s=%d but the store saw %d cleanups of a reservation fail", name, got, failed)
		}
	}
}

// counterByLabel sums a counter family by the value of one label ("" sums
// every series under "").
func counterByLabel(g prometheus.Gatherer, name, label string) map[string]int {
	out := map[string]int{}
	families, err := g.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			value := ""
			for _, l := range m.GetLabel() {
				if label != "" && l.GetName() == label {
					value = l.GetValue()
				}
			}
			out[value] += int(m.GetCounter().GetValue())
		}
	}
	return out
}

// checkUnlimitedOrgs: once an org's limit is set to none, its starts are
// never turned away for capacity: no 429, and no 503 but under a store
// fault of the start's own (no admission lock to find busy).
func checkUnlimitedOrgs(c *run) {
	unlimited := map[string]uint64{} // org -> step the limit was lifted
	for _, op := range c.in.History.Ops {
		if op.Kind != history.OpSetRunLimit || op.Output != history.OpOK {
			continue
		}
		if n, err := strconv.Atoi(op.Input); err == nil && n <= 0 {
			unlimited[op.Key] = op.RetStep
		} else {
			delete(unlimited, op.Key)
		}
	}
	for _, op := range c.startRuns() {
		at, ok := unlimited[op.Org]
		if !ok || at > op.CallStep || c.storeMayHaveForgotten(op.Return) {
			continue
		}
		if op.Status == 429 || op.Status == 503 && !c.storeFaultBy("gateway", op.CallStep, op.RetStep) {
			c.violate(LayerInvariants, "run_limit", op.Key, op.RetStep, op.Return,
				"a start for org %s got %d, though the org has had no run limit since step %d", op.Org, op.Status, at)
		}
	}
}

// checkForeignKeys: a key holding a value the system did not write (planted
// as another writer's) is never resolved: each start with it that gets as
// far as the key is refused as used (never admitted, in flight, a mismatch
// or a 429), and no command of the system changes the value.
func checkForeignKeys(c *run) {
	h := c.in.History
	planted := map[string]history.ClientOp{}
	for _, op := range h.Ops {
		if op.Kind == history.OpPlantRunKey && op.Output == history.OpOK {
			planted[op.Key] = op
		}
	}
	if len(planted) == 0 {
		return
	}
	for _, op := range c.startRuns() {
		p, ok := planted[op.Key]
		if !ok || op.CallStep < p.RetStep || c.storeMayHaveForgotten(op.Return) {
			continue
		}
		if op.Status == 200 || op.Status == 429 || op.Status == 409 && op.Output != history.RunReplyUsed {
			c.violate(LayerInvariants, "run_key_foreign", op.Key, op.RetStep, op.Return,
				"key %s holds a value the system did not write (%q), yet a start with it got %d %s", op.Key, p.Input,
				op.Status, op.Output)
		}
	}
	for _, r := range h.RunKeys {
		p, ok := planted[r.Key]
		if ok && r.Step > p.RetStep && r.Before == p.Input && r.After != p.Input {
			c.violate(LayerInvariants, "run_key_foreign", r.Key, r.Step, r.Time,
				"%s's %s changed key %s's value %q, which the system did not write, to %q", r.Actor, r.Op, r.Key,
				p.Input, r.After)
		}
	}
}

// checkActiveRuns: no org ever has more runs active than the loosest limit
// it had until then (the system's RunLimit, or one set for it; a set whose
// outcome is unknown may have applied).
func checkActiveRuns(c *run) {
	h := c.in.History
	const none = -1
	loosest := func(org string, step uint64) int {
		limit := c.in.System.RunLimit
		if limit <= 0 {
			return none
		}
		for _, op := range h.Ops {
			if op.Kind != history.OpSetRunLimit || op.Key != org || op.CallStep > step ||
				op.Output != history.OpOK && !op.Unknown {
				continue
			}
			n, err := strconv.Atoi(op.Input)
			if err != nil || n <= 0 {
				return none
			}
			limit = max(limit, n)
		}
		return limit
	}
	for _, rc := range h.RunCounts {
		limit := loosest(rc.Org, rc.Step)
		if limit == none || rc.Active <= limit || c.storeMayHaveForgotten(rc.Time) {
			continue
		}
		c.violate(LayerInvariants, "run_limit", "", rc.Step, rc.Time,
			"org %s had %d runs active after %s's command, over its limit of %d", rc.Org, rc.Active, rc.Actor, limit)
	}
}

// checkConflictsJustified: a 409 that settles a key must have a cause in
// what reached the store. A mismatch needs another intent sent with the key
// before the reply (a start of another org, workflow or body); "used" needs
// a value another writer left under it (planted before the reply). The
// model cannot tell: before any 200 reveals the key's binding, an unseen
// holder of another intent could explain either.
func checkConflictsJustified(c *run) {
	h := c.in.History
	type sent struct {
		intent string
		call   uint64
	}
	intents := map[string][]sent{}
	planted := map[string]uint64{}
	for _, op := range h.Ops {
		switch {
		case op.Kind == history.OpStartRun && op.Key != "":
			intents[op.Key] = append(intents[op.Key], sent{runIntent(op), op.CallStep})
		case op.Kind == history.OpPlantRunKey && (op.Output == history.OpOK || op.Unknown):
			if at, ok := planted[op.Key]; !ok || op.CallStep < at {
				planted[op.Key] = op.CallStep
			}
		}
	}
	for _, op := range c.startRuns() {
		if op.Status != 409 || op.Key == "" || c.storeMayHaveForgotten(op.Return) {
			continue
		}
		switch op.Output {
		case history.RunReplyMismatch:
			mine := runIntent(op)
			justified := false
			for _, o := range intents[op.Key] {
				justified = justified || o.intent != mine && o.call < op.RetStep
			}
			if !justified {
				c.violate(LayerInvariants, "run_conflict_justified", op.Key, op.RetStep, op.Return,
					"key %s was refused as reused for another payload, but no start of another intent was sent with it", op.Key)
			}
		case history.RunReplyUsed:
			if at, ok := planted[op.Key]; !ok || at > op.RetStep {
				c.violate(LayerInvariants, "run_conflict_justified", op.Key, op.RetStep, op.Return,
					"key %s was refused as used, but it holds no value another writer left", op.Key)
			}
		}
	}
}
