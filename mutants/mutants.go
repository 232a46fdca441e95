// Package mutants is the catalog of defects the source articles describe, each
// a small edit to engine/ that puts the defect back. A mutant is applied
// through `go build -overlay` to a copy of the edited files: the engine in the
// tree never carries a defect switch. The release suite as a whole must kill
// every mutant with one of the checkers it names (`simrun mutants`); the
// mutation score's results, a tool's mutants judged the same way, are kept
// here too (score.json, equivalent.txt).
package mutants

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Edit replaces From with To, once, in File (relative to the module root).
// With Line set, From must start at Line and Column (1-based, bytes, as
// go/token counts them): a mutation tool's edit names its position.
type Edit struct {
	File, From, To string
	Line, Column   int
}

// Mutant is one defect put back.
type Mutant struct {
	Name        string
	Origin      string // the article or defect it comes from
	Description string
	Edits       []Edit
	// Scenario is the release scenario written for it, and Catches the
	// checkers any of which counts as the kill, from any seed of the suite.
	Scenario string
	Catches  []string
	// Absorbed is set when another safety layer of the engine refuses
	// everything the defect lets through: no run can tell the mutant from
	// the engine, and it is equivalent, not a survivor.
	Absorbed *Absorbed
}

// Absorbed is the evidence that a mutant is equivalent: an engine unit test
// that stages the defect's situation passes with the mutant, and fails once
// Without also takes out the layer that absorbs it.
type Absorbed struct {
	Layer   string // the layer and why it absorbs the defect, in words
	Test    string // the engine/ test that stages the defect's situation
	Without []Edit // the edits that take the layer out
}

// storeTerminalGuard are the store's own refusals of a move out of a
// terminal state or off the transition table (seed 004's second fix).
var storeTerminalGuard = []Edit{
	{File: "engine/store.go", From: "if terminal[cur] then return {'terminal', cur} end\n", To: ""},
	{File: "engine/store.go", From: "if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n", To: ""},
}

// lockFence is the store's refusal of a write fenced by a lock token that
// no longer holds the job's lock, in the script and before it is sent.
var lockFence = []Edit{
	{File: "engine/store.go",
		From: "if ARGV[6] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[6] then\n",
		To:   "if false then\n"},
	{File: "engine/store.go",
		From: "\tif err := fenceErr(ctx); err != nil {\n\t\treturn TransitionResult{}, fmt.Errorf(\"transition job %s to %s: %w\", t.JobID, t.To, err)\n\t}\n",
		To:   "\tctx = context.WithoutCancel(ctx)\n"},
}

// resultTerminalCheck is the result handler's own check that the job is
// still in flight (seed 004's first fix), taken out.
var resultTerminalCheck = []Edit{
	{File: "engine/results.go",
		From: "\t\tcase job.State.Terminal():\n\t\t\te.metrics.resultIgnored.WithLabelValues(\"terminal\").Inc()\n\t\t\treturn nil\n",
		To:   ""},
	{File: "engine/results.go",
		From: "\t\tcase job.State != StateScheduled && job.State != StateDispatched && job.State != StateRunning:\n" +
			"\t\t\te.metrics.resultIgnored.WithLabelValues(\"not_dispatched\").Inc()\n\t\t\treturn nil\n",
		To: ""},
}

// All is the catalog.
var All = []Mutant{
	{
		Name:        "publish-before-dispatched-write",
		Origin:      "seed 000",
		Description: "the dispatch is published before DISPATCHED is written; a failed write retries and publishes again",
		Edits: []Edit{
			{File: "engine/scheduler.go",
				From: "\tdispatchID := newToken(e.rand)\n",
				To: "\tdispatchID := newToken(e.rand)\n" +
					"\tearly, _ := json.Marshal(JobPacket{JobID: job.ID, Topic: job.Topic, Tenant: job.Tenant, Payload: job.Payload,\n" +
					"\t\tDispatchGen: job.DispatchGen, DispatchID: dispatchID, Attempt: job.Attempts})\n" +
					"\tif err := e.bus.Publish(ctx, WorkerSubject(workerID), Message{ID: DispatchMessageID(job.ID, job.DispatchGen), Data: early}); err != nil {\n" +
					"\t\treturn e.retry(PhasePublish, e.backoff(job.Attempts), err)\n" +
					"\t}\n"},
			{File: "engine/scheduler.go",
				From: "\tif err := e.bus.Publish(ctx, WorkerSubject(workerID), msg); err != nil {\n\t\treturn e.rollbackDispatch(ctx, job, res.Version, lock, err)\n\t}\n",
				To:   "\t_ = msg\n"},
		},
		Scenario: "dispatch-rollback",
		Catches:  []string{"exactly_once_publish"},
	},
	{
		Name:        "fail-open-state-read",
		Origin:      "seed 001",
		Description: "a failed state read is taken as SCHEDULED and the write that follows is unconditional (the old store)",
		Edits: []Edit{
			{File: "engine/scheduler.go",
				From: "\t\t// Fail closed: with the state unknown, dispatching is a guess.\n" +
					"\t\te.metrics.failClosed.WithLabelValues(req.Topic).Inc()\n" +
					"\t\te.log.Error(\"state read failed, failing closed\", \"job_id\", req.JobID, \"error\", err)\n" +
					"\t\treturn e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)\n",
				To: "\t\tjob = &Job{ID: req.JobID, Topic: req.Topic, State: StateScheduled}\n"},
			{File: "engine/store.go", From: "if terminal[cur] then return {'terminal', cur} end\n", To: ""},
			{File: "engine/store.go", From: "if cur ~= ARGV[2] then return {'stale', cur} end\n", To: ""},
			{File: "engine/store.go", From: "if want > 0 and version ~= want then return {'stale', cur} end\n", To: ""},
			{File: "engine/store.go", From: "if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n", To: ""},
		},
		Scenario: "fail-closed-read",
		Catches:  []string{"transition_graph", "job_lifecycle", "no_resurrection"},
	},
	{
		Name:        "terminal-state-resurrection",
		Origin:      "seed 004",
		Description: "a result for a terminal job is applied: a retryable error after success requeues the job",
		Edits:       append(append([]Edit(nil), resultTerminalCheck...), storeTerminalGuard...),
		Scenario:    "terminal-resurrection",
		Catches:     []string{"no_resurrection"},
	},
	{
		Name:        "429-leaves-key-reserved",
		Origin:      "seed 002",
		Description: "the max-concurrent-runs rejection returns without deleting the idempotency reservation",
		Edits: []Edit{{File: "engine/admission.go",
			From: "\t\t\ta.cleanupReservation(ctx, resv, cleanupConcurrencyLimit)\n\t\t\treturn rejected(http.StatusTooManyRequests, \"max concurrent runs reached\",\n\t\t\t\tfmt.Errorf(\"org %s has",
			To:   "\t\t\treturn rejected(http.StatusTooManyRequests, \"max concurrent runs reached\",\n\t\t\t\tfmt.Errorf(\"org %s has"}},
		Scenario: "idempotency-reservation",
		Catches:  []string{"run_key_blocked"},
	},
	{
		Name:        "crashed-reservation-never-reclaimed",
		Origin:      "seed 002 (residual risk)",
		Description: "no stale takeover and no sweeper: a reservation whose request died blocks its key for good",
		Edits: []Edit{
			{File: "engine/admission.go",
				From: "\tage := a.clock.Now().Sub(time.UnixMilli(int64(score)))\n\tif age < a.cfg.StaleReservationAfter {\n\t\treturn inFlight, false\n\t}\n\treturn AdmissionResult{}, true\n",
				To:   "\t_ = score\n\treturn inFlight, false\n"},
			{File: "engine/admission.go",
				From: "\tcutoff := a.clock.Now().Add(-a.cfg.StaleReservationAfter).UnixMilli()\n",
				To:   "\tif true {\n\t\treturn 0, nil\n\t}\n\tcutoff := a.clock.Now().Add(-a.cfg.StaleReservationAfter).UnixMilli()\n"},
		},
		Scenario: "admission-crash",
		Catches:  []string{"run_key_reserved_without_run", "run_key_never_admitted", "run_key_blocked"},
	},
	{
		Name:        "no-pool-mapping-without-grace",
		Origin:      "seed 003",
		Description: "a missing pool mapping fails the job at once, with no grace window for a mapping that is on its way",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\t\tif now.Sub(since) >= e.cfg.NoPoolMappingGrace {\n",
			To:   "\t\tif true {\n"}},
		Scenario: "no-pool-mapping-race",
		// job_succeeded where the mapping arrives inside the window; anywhere,
		// the refinement guard that no grace failure comes before the window.
		Catches: []string{"job_succeeded", "grace_not_early"},
	},
	{
		Name:        "retry-cap-hides-root-cause",
		Origin:      "seed 003",
		Description: "a job at the scheduling-retry cap is dead-lettered as max_scheduling_retries, hiding the cause it retried on",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\t\tcause := job.LastErrorCode\n",
			To:   "\t\tcause := ReasonCode(\"\")\n"}},
		Scenario: "scheduling-retry-cap",
		Catches:  []string{"dlq_root_cause"},
	},
	{
		Name:        "no-rollback-on-publish-failure",
		Origin:      "seed 000",
		Description: "a failed publish leaves the job DISPATCHED and only asks for a retry, which the redelivery gate then skips",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\tif err := e.bus.Publish(ctx, WorkerSubject(workerID), msg); err != nil {\n\t\treturn e.rollbackDispatch(ctx, job, res.Version, lock, err)\n",
			To:   "\tif err := e.bus.Publish(ctx, WorkerSubject(workerID), msg); err != nil {\n\t\treturn e.retry(PhasePublish, e.backoff(job.Attempts), err)\n"}},
		Scenario: "dispatch-rollback",
		Catches:  []string{"dispatch_timeout", "job_terminal", "job_succeeded", "metrics"},
	},
	{
		Name:        "unconditional-rollback",
		Origin:      "seed 000",
		Description: "the publish rollback writes SCHEDULED over whatever the job is now, RUNNING or a terminal result included",
		Edits: []Edit{
			{File: "engine/scheduler.go",
				From: "\tres, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: StateDispatched, Version: version,\n\t\tTo: StateScheduled, Reason: \"rollback: \" + pubErr.Error(), Fence: lock,\n",
				To: "\tcur, _ := e.store.GetState(ctx, job.ID)\n\t_ = version\n" +
					"\tres, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: cur,\n\t\tTo: StateScheduled, Reason: \"rollback: \" + pubErr.Error(),\n"},
			{File: "engine/store.go",
				From: "if terminal[cur] then return {'terminal', cur} end\n",
				To:   "local blind = string.sub(ARGV[7], 1, 9) == 'rollback:'\nif terminal[cur] and not blind then return {'terminal', cur} end\n"},
			{File: "engine/store.go",
				From: "if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n",
				To:   "if not blind and not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n"},
		},
		Scenario: "pause-mid-dispatch",
		Catches:  []string{"no_resurrection", "transition_graph", "job_lifecycle", "exactly_once_publish", "exactly_once_execution"},
	},
	{
		Name:        "cleanup-deletes-foreign-reservation",
		Origin:      "seed 002",
		Description: "the reservation cleanup deletes the idempotency key without checking it still maps to this request",
		Edits: []Edit{{File: "engine/admission.go",
			From: "\treleaseRunKeyScript = redis.NewScript(`\nif redis.call('GET', KEYS[1]) == ARGV[1] then\n",
			To:   "\treleaseRunKeyScript = redis.NewScript(`\nif redis.call('GET', KEYS[1]) then\n"}},
		Scenario: "admission-crash",
		Catches:  []string{"run_admission", "run_key_blocked", "run_key_never_admitted", "run_key_reserved_without_run"},
	},
	{
		Name:        "requeue-completed-task",
		Origin:      "seed 004 (first fix removed)",
		Description: "the result handler applies a retryable failure without checking the job is still in flight; only the store's table guards it",
		Edits:       resultTerminalCheck,
		Scenario:    "terminal-resurrection",
		Catches:     []string{"no_resurrection", "transition_graph", "metrics", "job_terminal"},
		Absorbed: &Absorbed{
			Layer: "the store's transition table refuses every move out of a terminal state, whatever the caller " +
				"checked; the only other states the handler skips (PENDING, RETRYING) never meet a result of the " +
				"job's current generation. What is left is the engine's ignored-result counter, which no fact of a " +
				"run can hold to account (a late result may still be in flight when the run ends)",
			Test:    "TestResultOnTerminalJobChangesNothing",
			Without: storeTerminalGuard,
		},
	},
	{
		Name:        "lock-release-without-token",
		Origin:      "DEF-3 (older Cordum)",
		Description: "the job lock is released with a plain DEL: a handler whose lock expired deletes the lock its successor holds",
		Edits: []Edit{{File: "engine/lock.go",
			From: "\treleaseLockScript = redis.NewScript(`\nif redis.call('GET', KEYS[1]) == ARGV[1] then\n",
			To:   "\treleaseLockScript = redis.NewScript(`\nif redis.call('GET', KEYS[1]) then\n"}},
		Scenario: "pause-mid-dispatch",
		Catches:  []string{"lock_exclusive", "exactly_once_publish", "exactly_once_execution", "transition_graph", "no_resurrection"},
	},
	{
		Name:        "no-lock-fencing",
		Origin:      "DEF-3",
		Description: "store writes no longer check the writer still holds the job lock: a handler paused past the TTL writes after takeover",
		Edits:       lockFence,
		Scenario:    "lock-expiry",
		Catches: []string{"fenced_write", "lock_exclusive", "exactly_once_publish", "exactly_once_execution",
			"transition_graph", "no_resurrection", "attempts"},
	},
	{
		Name:        "attempts-not-counted-on-rollback",
		Origin:      "DEF-1",
		Description: "the publish rollback to SCHEDULED does not count an attempt, so a job whose publishes keep failing never reaches the retry cap",
		Edits: []Edit{{File: "engine/store.go",
			From: "if to == 'SCHEDULED' then redis.call('HINCRBY', KEYS[1], 'attempts', 1) end\n",
			To:   "if to == 'SCHEDULED' and cur ~= 'DISPATCHED' then redis.call('HINCRBY', KEYS[1], 'attempts', 1) end\n"}},
		Scenario: "dispatch-rollback",
		Catches:  []string{"attempts"},
	},
	{
		Name:        "reconciler-blind-overwrite",
		Origin:      "reconciler",
		Description: "the reconciler writes TIMEOUT over whatever the job is when it writes, not the state and version it read",
		Edits: []Edit{
			{File: "engine/reconciler.go",
				From: "\t_, err = e.store.Transition(ctx, Transition{JobID: job.ID, From: st, Version: job.Version,\n",
				To:   "\tcur, _ := e.store.GetState(ctx, job.ID)\n\t_, err = e.store.Transition(ctx, Transition{JobID: job.ID, From: cur,\n"},
			{File: "engine/store.go",
				From: "if terminal[cur] then return {'terminal', cur} end\n",
				To:   "local blind = ARGV[4] == 'TIMEOUT'\nif terminal[cur] and not blind then return {'terminal', cur} end\n"},
			{File: "engine/store.go",
				From: "if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n",
				To:   "if not blind and not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n"},
		},
		Scenario: "reconciler-vs-late-result",
		Catches:  []string{"no_resurrection", "transition_graph", "job_lifecycle", "dlq_entry"},
		Absorbed: &Absorbed{
			Layer: "the reconciler holds the job's lock from its read to its TIMEOUT write, which is fenced by that " +
				"lock's token: a write that lands proves no other handler took the lock in between, so the job is " +
				"still the state and version the reconciler read (the engine has no unlocked writer of an existing " +
				"job), and a write after the lock ran out is refused whatever it would overwrite",
			Test:    "TestReconcilerWriteLandsOnlyUnderItsLock",
			Without: lockFence,
		},
	},
	{
		Name:        "publish-when-dispatched-write-failed",
		Origin:      "seed 000",
		Description: "a failed DISPATCHED write is noted, the job published anyway, and then retried: the retry publishes again",
		Edits: []Edit{
			{File: "engine/scheduler.go",
				From: "\tres, err = e.store.Transition(ctx, Transition{JobID: job.ID, From: StateScheduled,",
				To:   "\tvar dispatchedWriteErr error\n\tres, err = e.store.Transition(ctx, Transition{JobID: job.ID, From: StateScheduled,"},
			{File: "engine/scheduler.go",
				From: "\t\t\t// The write did not land (or we cannot tell): publish nothing.\n\t\t\treturn e.retry(PhaseDispatchedWrite, e.cfg.StoreRetryDelay, err)\n",
				To:   "\t\t\tdispatchedWriteErr = err\n"},
			{File: "engine/scheduler.go",
				From: "\te.metrics.published.WithLabelValues(job.Topic).Inc()\n",
				To: "\te.metrics.published.WithLabelValues(job.Topic).Inc()\n" +
					"\tif dispatchedWriteErr != nil {\n\t\treturn e.retry(PhaseDispatchedWrite, e.cfg.StoreRetryDelay, dispatchedWriteErr)\n\t}\n"},
		},
		Scenario: "dispatch-rollback",
		Catches:  []string{"exactly_once_publish", "exactly_once_execution"},
	},
	{
		Name:        "republish-outside-dedup-window",
		Origin:      "regression redispatch-outside-dedup-window (swarm seed 103661)",
		Description: "a re-publish of a message id whose earlier publish may be stored is sent even after the broker's de-duplication window",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\treturn at.Sub(job.PublishFirstAt) < e.cfg.DedupWindow, nil\n",
			To:   "\treturn true, nil\n"}},
		Scenario: "swarm",
		Catches:  []string{"exactly_once_publish", "exactly_once_execution"},
	},
	{
		Name:        "republish-to-another-stream",
		Origin:      "regression republish-to-another-stream (world-swarm seed 600093)",
		Description: "a re-publish of a message id whose earlier publish may be stored goes to whichever worker the pick names now, though the broker may keep that worker's subject on a stream of its own, with a window of its own",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\tworkerID, err := e.pick(ctx, job, keep)\n",
			To:   "\tworkerID, err := e.pick(ctx, job, keep[:0])\n"}, {File: "engine/scheduler.go",
			From: "\tif earlierAttempt && workerID != job.PublishWorker {\n",
			To:   "\tif earlierAttempt && workerID != job.PublishWorker && false {\n"}},
		Scenario: "world-swarm",
		Catches:  []string{"exactly_once_publish", "exactly_once_execution"},
	},
}

// Lookup finds a mutant, of the catalog or a deep one, by name.
func Lookup(name string) (Mutant, bool) {
	for _, m := range slices.Concat(All, Deep) {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}

// IsDeep reports whether the named mutant is one of the deep defects.
func IsDeep(name string) bool {
	return slices.ContainsFunc(Deep, func(m Mutant) bool { return m.Name == name })
}

// Overlay writes the mutated files and a `go build -overlay` file into dir and
// returns the overlay file's path. root is the module root. An edit that no
// longer applies (its From is not in the file) is an error: the mutant must be
// brought up to date with the engine, never silently skipped.
func (m Mutant) Overlay(root, dir string) (string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	files := map[string]string{} // absolute source path -> mutated content
	var order []string
	for i, e := range m.Edits {
		src := filepath.Join(root, filepath.FromSlash(e.File))
		text, seen := files[src]
		if !seen {
			b, err := os.ReadFile(src)
			if err != nil {
				return "", fmt.Errorf("mutant %s: %w", m.Name, err)
			}
			text = string(b)
			order = append(order, src)
		}
		if e.Line > 0 {
			at := offsetOf(text, e.Line, e.Column)
			if at < 0 || !strings.HasPrefix(text[at:], e.From) {
				return "", fmt.Errorf("mutant %s: edit %d no longer applies to %s:%d:%d", m.Name, i+1, e.File, e.Line, e.Column)
			}
			files[src] = text[:at] + e.To + text[at+len(e.From):]
			continue
		}
		if !strings.Contains(text, e.From) {
			return "", fmt.Errorf("mutant %s: edit %d no longer applies to %s", m.Name, i+1, e.File)
		}
		files[src] = strings.Replace(text, e.From, e.To, 1)
	}
	replace := map[string]string{}
	for i, src := range order {
		dst := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(src)))
		if err := os.WriteFile(dst, []byte(files[src]), 0o644); err != nil {
			return "", err
		}
		replace[src] = dst
	}
	b, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return "", err
	}
	// A tool mutant's name is its site, slashes and spaces included.
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, m.Name)
	overlay := filepath.Join(dir, "overlay-"+safe+".json")
	return overlay, os.WriteFile(overlay, b, 0o644)
}

// offsetOf is the byte offset of line:column in text, or -1.
func offsetOf(text string, line, column int) int {
	at := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[at:], '\n')
		if i < 0 {
			return -1
		}
		at += i + 1
	}
	end := strings.IndexByte(text[at:], '\n')
	if end < 0 {
		end = len(text) - at
	}
	if column < 1 || column > end {
		return -1
	}
	return at + column - 1
}
