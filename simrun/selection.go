package simrun

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// maxSeedsPerCase bounds --seeds and --count, so a typo cannot queue a
// billion runs.
const maxSeedsPerCase = 1_000_000

// selection is what a run command chose: the suite (or one scenario) and the
// seeds of each case.
type selection struct {
	Name  string // suite name, or "scenario:<name>"
	Cases []scenarios.Case
	// Custom marks cases whose seeds the flags chose: a declared kind that never
	// fires on a hand-picked seed says nothing, so only fixed ranges judge it.
	Custom []bool
}

// seedFlags are the seed-choosing flags of run.
type seedFlags struct {
	seed, seeds string
	count       int
}

// selectCases turns the run flags into cases. --suite runs the suite's ranges;
// --scenario runs the scenario's release range. --seed S and --seeds A..B
// (inclusive) replace the seeds of every case but pinned regression seeds;
// --count N takes N seeds from S (with --seed) or from the start of each range.
func selectCases(suite, scenario string, sf seedFlags) (selection, error) {
	if suite != "" && scenario != "" {
		return selection{}, fmt.Errorf("--suite and --scenario are exclusive")
	}
	if sf.seed != "" && sf.seeds != "" {
		return selection{}, fmt.Errorf("--seed and --seeds are exclusive")
	}
	if sf.count < 0 || sf.count > maxSeedsPerCase {
		return selection{}, fmt.Errorf("--count %d: want 1..%d", sf.count, maxSeedsPerCase)
	}
	if sf.count > 0 && sf.seeds != "" {
		return selection{}, fmt.Errorf("--count and --seeds are exclusive")
	}
	var sel selection
	switch {
	case scenario != "":
		sc, ok := scenarios.Lookup(scenario)
		if !ok {
			return selection{}, unknownName("scenario", scenario, scenarioNames())
		}
		sel = selection{Name: "scenario:" + sc.Name, Cases: []scenarios.Case{{Scenario: sc, Seeds: sc.Seeds.Seeds()}}}
	default:
		if suite == "" {
			suite = "release"
		}
		s, ok := scenarios.LookupSuite(suite)
		if !ok {
			return selection{}, unknownName("suite", suite, suiteNames())
		}
		sel = selection{Name: s.Name, Cases: s.Cases}
	}
	override, err := explicitSeeds(sf)
	if err != nil {
		return selection{}, err
	}
	sel.Custom = make([]bool, len(sel.Cases))
	for i, c := range sel.Cases {
		switch {
		case c.Finding != "":
			// A pinned regression seed is the point of its case.
		case override != nil:
			sel.Cases[i].Seeds = override
			sel.Custom[i] = true
		case sf.count > 0:
			sel.Custom[i] = true
			first := c.Scenario.Seeds.First
			if len(c.Seeds) > 0 {
				first = c.Seeds[0]
			}
			sel.Cases[i].Seeds = scenarios.SeedRange{First: first, Count: sf.count}.Seeds()
		}
	}
	return sel, nil
}

// explicitSeeds is the seed list --seed/--seeds (and --count with --seed) name,
// or nil when they name none.
func explicitSeeds(sf seedFlags) ([]uint64, error) {
	switch {
	case sf.seed != "":
		s, err := sim.ParseSeed(sf.seed)
		if err != nil {
			return nil, fmt.Errorf("--seed: %v", err)
		}
		return scenarios.SeedRange{First: s, Count: max(sf.count, 1)}.Seeds(), nil
	case sf.seeds != "":
		lo, hi, err := parseSeedRange(sf.seeds)
		if err != nil {
			return nil, fmt.Errorf("--seeds: %v", err)
		}
		return scenarios.SeedRange{First: lo, Count: int(hi-lo) + 1}.Seeds(), nil
	}
	return nil, nil
}

// parseSeedRange parses "A..B", both ends included.
func parseSeedRange(s string) (lo, hi uint64, err error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not a range A..B", s)
	}
	if lo, err = sim.ParseSeed(a); err != nil {
		return 0, 0, err
	}
	if hi, err = sim.ParseSeed(b); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("%q ends before it starts", s)
	}
	if hi-lo >= maxSeedsPerCase {
		return 0, 0, fmt.Errorf("%q has more than %d seeds", s, maxSeedsPerCase)
	}
	return lo, hi, nil
}

// shard is this process's part of a run: index I of N, 1-based.
type shard struct{ I, N int }

func (s shard) String() string {
	if s.N <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{I: 1, N: 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N", s)
	}
	return shard{I: i, N: n}, nil
}

// task is one seed of one case, as sent to a worker.
type task struct {
	Index    int    `json:"index"` // in this run's task list
	System   string `json:"system,omitempty"`
	Scenario string `json:"scenario"`
	Finding  string `json:"finding,omitempty"`
	Seed     uint64 `json:"seed"`
	Expect   string `json:"expect,omitempty"`
	// Artifacts asks for the seed's folder: a traced re-run that must give
	// Checksum, the first run's.
	Artifacts bool   `json:"artifacts,omitempty"`
	Checksum  string `json:"checksum,omitempty"`
	// Compare asks for the seed's facts for simrun compare, not its verdict.
	Compare bool `json:"compare,omitempty"`
	// Branch ("K/B") and Strategy are the run's variant of the seed.
	Branch   string `json:"branch,omitempty"`
	Strategy string `json:"strategy,omitempty"`
	// Moments asks for the run's moments, for explore --branch.
	Moments bool `json:"moments,omitempty"`
	// Events asks for the keys of the events a branch drew after its step,
	// for simrun likelihood.
	Events bool `json:"events,omitempty"`
}

// tasks flattens the cases in order (regression seeds first, as the suite
// lists them) and keeps this shard's share: every N-th task from I-1.
func (sel selection) tasks(sh shard) []task {
	var out []task
	i := 0
	for _, c := range sel.Cases {
		for _, seed := range c.Seeds {
			if reports.InShard(i, sh.I, sh.N) {
				out = append(out, task{Scenario: c.Scenario.Name, Finding: c.Finding, Seed: seed,
					Expect: c.Scenario.ExpectViolation})
			}
			i++
		}
	}
	return out
}

// specs describes the cases for the summary.
// Declared kinds are those the system can reach (Scenario.DeclaredFaults).
func (sel selection) specs(sys sut.System) []reports.CaseSpec {
	out := make([]reports.CaseSpec, len(sel.Cases))
	for i, c := range sel.Cases {
		spec := reports.CaseSpec{Scenario: c.Scenario.Name, Finding: c.Finding, Seeds: c.Seeds,
			ExpectViolation: c.Scenario.ExpectViolation, Sometimes: c.Sometimes}
		for _, k := range c.Scenario.On(sys).DeclaredFaults() {
			if !sel.Custom[i] {
				spec.Declared = append(spec.Declared, k.Name)
			}
		}
		out[i] = spec
	}
	return out
}
