package checker

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/model"
)

// runHistories turns the clients' run starts into one porcupine history per
// idempotency key. Only a 200 names a run; everything else constrains nothing,
// and a lost reply returns at +inf.
func runHistories(h *history.History) (map[string][]porcupine.Operation, []string) {
	out := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range h.Ops {
		if op.Kind != history.OpStartRun || op.Key == "" {
			continue
		}
		if _, ok := out[op.Key]; !ok {
			keys = append(keys, op.Key)
		}
		client := op.Client + 1
		intent := runIntent(op)
		var o porcupine.Operation
		switch {
		case op.Unknown:
			o = model.StartRunUnknownOp(client, callAt(op.CallStep), op.Key, intent)
		case op.Status == 409 && op.Output == history.RunReplyMismatch:
			o = model.StartRunMismatchOp(client, callAt(op.CallStep), returnAt(op.RetStep), op.Key, intent)
		default:
			runID := ""
			if op.Status == 200 {
				runID = op.Output
			}
			o = model.StartRunOp(client, callAt(op.CallStep), returnAt(op.RetStep), op.Key, intent, op.Status, runID)
		}
		out[op.Key] = append(out[op.Key], o)
	}
	sort.Strings(keys)
	return out, keys
}

// runIntent is what a start asked for, as the key's binding must match it:
// the org, the workflow and the body as JSON means it (whitespace, the order
// of an object's fields and how a string is escaped are not part of a
// request's identity: clients write one body many ways). A start that names
// neither org nor workflow is known by its body alone.
func runIntent(op history.ClientOp) string {
	body := op.Input
	if canonical, ok := canonicalJSON(body); ok {
		body = canonical
	}
	if op.Org == "" && op.Workflow == "" {
		return body
	}
	return op.Org + " " + op.Workflow + " " + body
}

// checkRunAdmission: every 200 for a key names one run, and a 409 mismatch
// never refuses the intent the key is bound to (linearizability of the
// set-once register).
func checkRunAdmission(c *run) {
	hist, keys := runHistories(c.in.History)
	for _, key := range keys {
		ops := hist[key]
		res, info := porcupine.CheckOperationsVerbose(model.RunAdmission, ops, c.spec.LinearizabilityTimeout)
		p := Partition{Kind: "run", Key: key, Ops: len(ops), Model: model.RunAdmission, History: ops, Info: info}
		p.Outcome = c.judgePartition(res)
		if p.Outcome == LinIllegal {
			c.violate(LayerLinearization, "run_admission", key, lastRunStep(c.in.History, key), c.in.History.End,
				"idempotency key %s: the 200 and 409 mismatch replies do not agree on one run for one intent", key)
		}
		c.out.Partitions = append(c.out.Partitions, p)
	}
}

func lastRunStep(h *history.History, key string) uint64 {
	var step uint64
	for _, op := range h.Ops {
		if op.Kind == history.OpStartRun && op.Key == key {
			step = max(step, op.RetStep)
		}
	}
	return step
}

// checkRunKeysLive is seed 002's property: a key is never left blocked. Three
// views of it:
//   - run_key_blocked: a 409 "in flight" with nobody holding the key: no other
//     start of the key overlaps it, none before it had an unknown outcome
//     recently enough to still hold a fresh reservation, and no fault touched
//     the key in that time (a failed cleanup is a residual risk the engine
//     admits; the stale takeover is what bounds it).
//   - run_key_reserved_without_run: at the end, a reservation whose run never
//     came to exist and that is older than a stale period plus a sweep.
//   - run_key_never_admitted: a key turned away with 429 or a 5xx (capacity,
//     a busy admission lock, a failing store: each passes) that no later start
//     settled, though its client kept retrying.
func checkRunKeysLive(c *run) {
	h := c.in.History
	byKey := map[string][]history.ClientOp{}
	for _, op := range h.Ops {
		if op.Kind == history.OpStartRun && op.Key != "" {
			byKey[op.Key] = append(byKey[op.Key], op)
		}
	}
	stale := c.in.Admission.StaleAfter
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		ops := byKey[key]
		// One violation per key, at the first blocked reply: a leaked
		// reservation blocks every retry until it goes stale.
		var first *history.ClientOp
		blocked := 0
		for i, op := range ops {
			if op.Status != 409 || op.Output != history.RunReplyInFlight || op.Unknown || heldBySomeone(h, ops, i, key, stale) {
				continue
			}
			if first == nil {
				first = &ops[i]
			}
			blocked++
		}
		if first != nil {
			c.violate(LayerLiveness, "run_key_blocked", key, first.RetStep, first.Return,
				"idempotency key %s answered 409 in flight at step %d with no request holding it (%d such replies): a rejected start left its reservation behind",
				key, first.RetStep, blocked)
		}
		rejectedAt := -1
		for i, op := range ops {
			if (op.Status == 429 || op.Status >= 500) && rejectedAt < 0 {
				rejectedAt = i
			}
			if settled(op) {
				rejectedAt = -1
			}
		}
		if rejectedAt >= 0 {
			op := ops[rejectedAt]
			c.violate(LayerLiveness, "run_key_never_admitted", key, op.RetStep, op.Return,
				"idempotency key %s was turned away with %d at step %d and no retry got an answer that settles it (%d tries)",
				key, op.Status, op.RetStep, len(ops)-rejectedAt)
		}
	}
	snap := c.in.Admission
	bound := snap.StaleAfter + snap.StaleAfter // the stale period, then one sweep
	for _, key := range slices.Sorted(maps.Keys(snap.Reserved)) {
		at := snap.Reserved[key]
		runID, _, _ := strings.Cut(snap.Keys[key], "|")
		if _, ok := snap.Runs[runID]; ok || h.End-at <= bound {
			continue
		}
		c.violate(LayerLiveness, "run_key_reserved_without_run", key, lastRunStep(h, key), h.End,
			"idempotency key %s still reserved for run %s, which does not exist, %s after the reservation", key, runID, h.End-at)
	}
}

// settled reports whether a start's reply ends its client's retries: a 200,
// or a refusal that another try would get again (a 4xx but 429 and a 409 in
// flight).
func settled(op history.ClientOp) bool {
	switch {
	case op.Unknown || op.Status == 0 || op.Status == 429 || op.Status >= 500:
		return false
	case op.Status == 409:
		return op.Output != history.RunReplyInFlight
	}
	return true
}

// heldBySomeone reports whether the i-th start of key could have met a
// reservation that someone legitimately still held.
func heldBySomeone(h *history.History, ops []history.ClientOp, i int, key string, stale time.Duration) bool {
	op := ops[i]
	for j, other := range ops {
		if j == i || other.CallStep >= op.RetStep {
			continue
		}
		// A start with no answer may have reserved the key at any time until
		// the client gave up on it; the reservation is fresh for a stale period.
		if other.Unknown && other.Call+history.RunRequestTimeout+stale >= op.Call {
			return true
		}
		if !other.Unknown && other.RetStep > op.CallStep {
			return true
		}
	}
	for _, f := range h.Faults {
		if f.Step > op.RetStep {
			break
		}
		if f.Time+stale >= op.Call && mentions(f.Target, key) {
			return true
		}
	}
	return false
}

// canonicalJSON writes a JSON value one way: objects' fields sorted, strings
// escaped alike, no whitespace; numbers as written.
func canonicalJSON(s string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF { // one value, nothing after it
		return "", false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}
