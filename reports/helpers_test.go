package reports

import (
	"sync"
	"testing"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

const dupScenario = "ambiguous-publish-no-dedup"

var (
	failingOnce    sync.Once
	failingOutcome *scenarios.Outcome
)

// failingRun is the first seed of ambiguous-publish-no-dedup whose run finds a
// duplicate publish: a real failing outcome, computed once per test binary.
func failingRun(t *testing.T) *scenarios.Outcome {
	t.Helper()
	failingOnce.Do(func() {
		sc, ok := scenarios.Lookup(dupScenario)
		if !ok {
			return
		}
		for _, seed := range sc.Seeds.Seeds() {
			if o := sc.RunTraced(seed, nil); o.HasViolation("exactly_once_publish") {
				failingOutcome = o
				return
			}
		}
	})
	if failingOutcome == nil {
		t.Fatalf("no seed of %s found a duplicate publish", dupScenario)
	}
	return failingOutcome
}

// firstViolation returns the failing run's first exactly_once_publish violation.
func firstViolation(t *testing.T, o *scenarios.Outcome) checker.Violation {
	t.Helper()
	for _, v := range o.Result.Violations {
		if v.Checker == "exactly_once_publish" {
			return v
		}
	}
	t.Fatal("no exactly_once_publish violation")
	return checker.Violation{}
}

// poisoned returns a copy of o in which job is renamed to payload everywhere
// the report reads it (history, violations), and the first fault's target
// carries targetPayload. The original outcome is left as it was.
func poisoned(o *scenarios.Outcome, job, payload, targetPayload string) *scenarios.Outcome {
	h := *o.Run.History
	h.Submitted = append([]sim.SubmittedJob(nil), h.Submitted...)
	for i := range h.Submitted {
		if h.Submitted[i].JobID == job {
			h.Submitted[i].JobID = payload
		}
	}
	h.States = append([]sim.StateChange(nil), h.States...)
	for i := range h.States {
		if h.States[i].JobID == job {
			h.States[i].JobID = payload
		}
	}
	h.Publishes = append([]sim.PublishRecord(nil), h.Publishes...)
	for i := range h.Publishes {
		if h.Publishes[i].JobID == job {
			h.Publishes[i].JobID = payload
		}
	}
	h.Executions = append([]sim.Execution(nil), h.Executions...)
	for i := range h.Executions {
		if h.Executions[i].JobID == job {
			h.Executions[i].JobID = payload
		}
	}
	h.Faults = append([]sim.FaultRecord(nil), h.Faults...)
	if len(h.Faults) > 0 {
		h.Faults[0].Target = targetPayload + " " + payload
	}
	run := *o.Run
	run.History = &h
	res := *o.Result
	res.Violations = append([]checker.Violation(nil), res.Violations...)
	for i := range res.Violations {
		if res.Violations[i].Job == job {
			res.Violations[i].Job = payload
			res.Violations[i].Message = payload + ": " + res.Violations[i].Message
			res.Violations[i].FaultSteps = append(res.Violations[i].FaultSteps, h.Faults[0].Step)
		}
	}
	out := *o
	out.Run = &run
	out.Result = &res
	return &out
}

// runOf is an outcome as reports read it.
func runOf(o *scenarios.Outcome) Run {
	r := Run{System: o.System, Scenario: o.Scenario, Seed: o.Seed, Checksum: o.Checksum, Steps: o.Steps,
		Result: o.Result, Plan: o.Plan, Fired: o.Fired, Branches: o.Branches, Wall: o.Wall, Check: o.Check,
		Replay: o.ReplayLine()}
	if o.Run != nil {
		r.History = o.Run.History
	}
	if o.World != nil {
		r.Trace = o.World.Trace().Bytes()
		spec := o.World.Spec()
		r.Spec = &spec
	}
	return r
}
