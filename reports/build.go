package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
)

// seedKey identifies a seed's run across shards.
type seedKey struct {
	scenario, finding string
	seed              uint64
}

func keyOf(r SeedResult) seedKey { return seedKey{r.Scenario, r.Finding, r.Seed} }

// Build judges each case from the seeds that belong to it (same scenario and
// finding, seed in the case's list) and sums coverage over every seed. A case
// with missing seeds (a shard) is judged on the seeds it has, but its coverage
// (never-fired kinds, the expected violation) only once it is complete: a
// shard cannot know what the others fired.
func Build(tool, suite, shard string, cases []CaseSpec, seeds []SeedResult, wall float64) *Summary {
	s := &Summary{Version: SummaryVersion, Tool: tool, Suite: suite, Shard: shard, WallSeconds: wall,
		Coverage: Coverage{Fired: map[string]int{}, Branches: map[string]int{}}}

	// Each seed belongs to the first case that claims it; seeds no case
	// claims sort last and still count (a caller's mistake must not hide a
	// failure).
	caseOf := make([]int, len(seeds))
	for i, r := range seeds {
		caseOf[i] = len(cases)
		for ci, c := range cases {
			if c.Scenario == r.Scenario && c.Finding == r.Finding && slices.Contains(c.Seeds, r.Seed) {
				caseOf[i] = ci
				break
			}
		}
	}
	order := make([]int, len(seeds))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := seeds[order[a]], seeds[order[b]]
		if caseOf[order[a]] != caseOf[order[b]] {
			return caseOf[order[a]] < caseOf[order[b]]
		}
		if x.Scenario != y.Scenario {
			return x.Scenario < y.Scenario
		}
		if x.Finding != y.Finding {
			return x.Finding < y.Finding
		}
		return x.Seed < y.Seed
	})
	s.Seeds = make([]SeedResult, 0, len(seeds))
	byCase := make([][]SeedResult, len(cases)+1)
	for _, i := range order {
		r := seeds[i]
		s.Seeds = append(s.Seeds, r)
		byCase[caseOf[i]] = append(byCase[caseOf[i]], r)
		for k, n := range r.Fired {
			s.Coverage.Fired[k] += n
		}
		for k, n := range r.Branches {
			s.Coverage.Branches[k] += n
		}
	}

	s.Verdict = VerdictPass
	s.Cases = make([]CaseResult, 0, len(cases))
	for ci, c := range cases {
		cr := judgeCase(c, byCase[ci])
		s.Verdict = worse(s.Verdict, cr.Verdict)
		s.Cases = append(s.Cases, cr)
	}
	for _, r := range byCase[len(cases)] {
		s.Verdict = worse(s.Verdict, r.Verdict)
	}
	return s
}

// judgeCase computes one case's result from its seeds (in seed order).
func judgeCase(c CaseSpec, seeds []SeedResult) CaseResult {
	cr := CaseResult{CaseSpec: c, Fired: map[string]int{}, Verdict: VerdictPass}
	have := map[uint64]bool{}
	for _, r := range seeds {
		have[r.Seed] = true
		for k, n := range r.Fired {
			cr.Fired[k] += n
		}
		if r.Verdict == VerdictExpected || (c.ExpectViolation != "" && hasChecker(r, c.ExpectViolation)) {
			cr.ExpectedFound = true
		}
		if failing(r.Verdict) {
			cr.Failed = append(cr.Failed, r.Seed)
			cr.Verdict = worse(cr.Verdict, r.Verdict)
		}
	}
	for _, seed := range c.Seeds {
		if !have[seed] {
			cr.Missing = append(cr.Missing, seed)
		}
	}
	if len(cr.Missing) == 0 {
		for _, k := range c.Declared {
			if cr.Fired[k] == 0 {
				cr.NeverFired = append(cr.NeverFired, k)
			}
		}
		if c.ExpectViolation != "" && !cr.ExpectedFound {
			cr.NeverFired = append(cr.NeverFired, "expected violation "+c.ExpectViolation)
		}
	}
	if len(cr.NeverFired) > 0 {
		cr.Verdict = worse(cr.Verdict, VerdictSafety) // a false green fails the gate
	}
	cr.Passed = cr.Verdict == VerdictPass
	return cr
}

func hasChecker(r SeedResult, name string) bool {
	for _, v := range r.Violations {
		if v.Checker == name {
			return true
		}
	}
	return false
}

// Merge joins shard summaries into one: same format version and suite, the
// same cases, no seed twice. Coverage and verdicts are judged again over the
// union, so a kind that fired in one shard only counts.
func Merge(parts []*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge summaries: nothing to merge")
	}
	first := parts[0]
	var seeds []SeedResult
	seen := map[seedKey]int{}
	wall := 0.0
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("merge summaries: part %d is empty", i+1)
		}
		if p.Version != SummaryVersion {
			return nil, fmt.Errorf("merge summaries: part %d (shard %q) has format version %d, this build reads version %d",
				i+1, p.Shard, p.Version, SummaryVersion)
		}
		if p.Suite != first.Suite {
			return nil, fmt.Errorf("merge summaries: part %d is suite %q, part 1 is suite %q", i+1, p.Suite, first.Suite)
		}
		if err := sameCases(first.Cases, p.Cases); err != nil {
			return nil, fmt.Errorf("merge summaries: part %d: %w", i+1, err)
		}
		for _, r := range p.Seeds {
			k := keyOf(r)
			if j, dup := seen[k]; dup {
				return nil, fmt.Errorf("merge summaries: %s seed %d%s is in part %d and part %d",
					r.Scenario, r.Seed, findingSuffix(r.Finding), j, i+1)
			}
			seen[k] = i + 1
			seeds = append(seeds, r)
		}
		wall += p.WallSeconds
	}
	specs := make([]CaseSpec, len(first.Cases))
	for i, c := range first.Cases {
		specs[i] = c.CaseSpec
	}
	return Build(first.Tool, first.Suite, "", specs, seeds, wall), nil
}

func findingSuffix(f string) string {
	if f == "" {
		return ""
	}
	return " (" + f + ")"
}

// sameCases compares two parts' case declarations.
func sameCases(a, b []CaseResult) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d cases, part 1 has %d: the shards ran different suites or builds", len(b), len(a))
	}
	for i := range a {
		x, y := a[i].CaseSpec, b[i].CaseSpec
		if x.Scenario != y.Scenario || x.Finding != y.Finding || x.ExpectViolation != y.ExpectViolation ||
			!slices.Equal(x.Seeds, y.Seeds) || !slices.Equal(x.Declared, y.Declared) {
			return fmt.Errorf("case %d (%s) differs from part 1's (%s): the shards ran different suites or builds",
				i+1, y.Scenario, x.Scenario)
		}
	}
	return nil
}

// ReadSummary reads a summary.json of this build's format version.
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	switch {
	case probe.Version == nil:
		return nil, fmt.Errorf("read summary %s: no format version (this build reads version %d)", path, SummaryVersion)
	case *probe.Version != SummaryVersion:
		return nil, fmt.Errorf("read summary %s: format version %d, this build reads version %d",
			path, *probe.Version, SummaryVersion)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	return &s, nil
}
