// Package adaptercheck runs a system through a few small deterministic worlds
// and says, in words, what its adapter gets wrong: a state the observer never
// reports, a result pointer missing from a succeeded record, spec roles that
// disagree with the transitions the store committed, a dispatch id that makes
// two executions indistinguishable, a fault point the spec declares that the
// observer never names. It judges the adapter, not the system: a run's
// verdict is the suites' business. simrun check prints it; an adapter's own
// test calls Check.
package adaptercheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Severity says whether a finding makes the harness judge wrongly (Error)
// or only leaves part of it idle (Warning).
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one thing the adapter gets wrong, and what to change.
type Finding struct {
	Severity Severity
	What     string
	Fix      string
}

// Report is what Check found, over which worlds.
type Report struct {
	System   string
	Worlds   []string // scenario/seed
	Findings []Finding
}

// Failed reports whether any finding is an error.
func (r Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

// worlds are the small worlds the check runs: between them they reach every
// state role, worker outcome, cancel, timeout, rollback, lock and admission
// path a system may have. Two seeds each keep it a few seconds.
var worlds = []string{"worker-outcomes", "cancels", "topic-timeouts", "dispatch-rollback", "lock-renewals",
	"run-admission-contract", "no-pool-mapping-static", "scheduling-retry-cap", "submit-retries", "store-failover"}

// Check runs sys through the worlds and reads what its adapter reported.
func Check(sys sut.System) Report {
	rec := &recorder{System: sys, obs: &recordingObserver{Observer: sys.Observer()}}
	spec := sys.Spec(sut.Options{})
	rep := Report{System: sys.Name()}
	a := newAudit(spec)
	d := newDeclared(spec)
	for _, name := range worlds {
		sc, ok := scenarios.Lookup(name)
		if !ok {
			panic("adaptercheck: unknown scenario " + name)
		}
		for _, seed := range sc.Seeds.Seeds()[:2] {
			o := sc.On(rec).Run(seed)
			rep.Worlds = append(rep.Worlds, fmt.Sprintf("%s/%d", name, seed))
			if o.Run.Err != nil {
				a.add(Error, fmt.Sprintf("the world %s seed %d stopped: %v", name, seed, o.Run.Err),
					"a system must run under the simulator: no goroutines of its own, no wall clock, no blocking outside Ports")
				continue
			}
			a.run(o)
			d.run(o)
		}
	}
	a.commands(rec.obs)
	a.workerGate(sys)
	d.judge(a, sys)
	rep.Findings = a.findings()
	return rep
}

// String prints the report as a person reads it.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "adapter of %s, over %d small worlds (%s):\n", r.System, len(r.Worlds), strings.Join(r.Worlds, " "))
	if len(r.Findings) == 0 {
		b.WriteString("  nothing wrong found\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s: %s\n    fix: %s\n", f.Severity, f.What, f.Fix)
	}
	return b.String()
}

// recorder is sys with its observer recorded.
type recorder struct {
	sut.System
	obs *recordingObserver
}

func (r *recorder) Observer() sut.Observer { return r.obs }

// recordingObserver keeps what the observer said of each store command.
type recordingObserver struct {
	sut.Observer
	facts   []sut.CommandFact
	unnamed map[string]int // script runs Observer.Scripts did not name, by their key count and first key
}

func (o *recordingObserver) Command(c sut.StoreCommand) sut.CommandFact {
	f := o.Observer.Command(c)
	o.facts = append(o.facts, f)
	if (c.Name == "evalsha" || c.Name == "eval") && c.Script == "" {
		if o.unnamed == nil {
			o.unnamed = map[string]int{}
		}
		o.unnamed[fmt.Sprintf("%d keys, first %q", len(c.Keys), c.Key(0))]++
	}
	return f
}

// sortedKeys lists a set's members in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
