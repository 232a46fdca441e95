// Package mutants is the catalog of defects the source articles describe, each
// a small edit to engine/ that puts the defect back. A mutant is applied
// through `go build -overlay` to a copy of the edited files: the engine in the
// tree never carries a defect switch. The suites must kill every mutant: the
// mutant's scenario fails with one of the checkers it names.
package mutants

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Edit replaces From with To, once, in File (relative to the module root).
type Edit struct {
	File, From, To string
}

// Mutant is one defect put back.
type Mutant struct {
	Name        string
	Origin      string // the article or defect it comes from
	Description string
	Edits       []Edit
	// Scenario is the release scenario that must kill it, and Catches the
	// checkers any of which counts as the kill.
	Scenario string
	Catches  []string
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
		Edits: []Edit{
			{File: "engine/results.go",
				From: "\t\tcase job.State.Terminal():\n\t\t\te.metrics.resultIgnored.WithLabelValues(\"terminal\").Inc()\n\t\t\treturn nil\n",
				To:   ""},
			{File: "engine/results.go",
				From: "\t\tcase job.State != StateScheduled && job.State != StateDispatched && job.State != StateRunning:\n" +
					"\t\t\te.metrics.resultIgnored.WithLabelValues(\"not_dispatched\").Inc()\n\t\t\treturn nil\n",
				To: ""},
			{File: "engine/store.go", From: "if terminal[cur] then return {'terminal', cur} end\n", To: ""},
			{File: "engine/store.go", From: "if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n", To: ""},
		},
		Scenario: "terminal-resurrection",
		Catches:  []string{"no_resurrection"},
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
		Catches:  []string{"job_succeeded"},
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
}

// Lookup finds a mutant by name.
func Lookup(name string) (Mutant, bool) {
	for _, m := range All {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
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
	overlay := filepath.Join(dir, "overlay-"+m.Name+".json")
	return overlay, os.WriteFile(overlay, b, 0o644)
}
