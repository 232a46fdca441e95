package reports

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
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
// shard cannot know what the others fired. Seeds of this shard's share
// (shard "I/N", or every seed when "") that have no result make the case and
// the summary incomplete.
func Build(tool, suite, shard string, cases []CaseSpec, seeds []SeedResult, wall float64) *Summary {
	s := &Summary{Version: SummaryVersion, Tool: tool, Suite: suite, Shard: shard, WallSeconds: wall,
		Coverage: Coverage{Fired: map[string]int{}, Branches: map[string]int{}}}
	s.ShardIndex, s.ShardCount = parseShard(shard)
	s.SuiteSeeds, s.SeedList = seedList(cases)

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

	s.Cases = make([]CaseResult, 0, len(cases))
	task := 0 // the seed's index in the whole run, which decides its shard
	for ci, c := range cases {
		mine := map[uint64]bool{}
		for _, seed := range c.Seeds {
			if InShard(task, s.ShardIndex, s.ShardCount) {
				mine[seed] = true
				s.Planned++
			}
			task++
		}
		cr := judgeCase(c, byCase[ci], mine)
		s.NotRun += len(cr.NotRun)
		s.Cases = append(s.Cases, cr)
	}
	s.Groups = failureGroups(s.Seeds)
	s.judge()
	return s
}

// InShard reports whether the task at index i (0-based, in run order) belongs
// to shard index of count: every count-th task from index-1.
func InShard(i, index, count int) bool { return count <= 1 || i%count == index-1 }

// parseShard reads "I/N"; "" (or anything else) is the whole run, 1 of 1.
func parseShard(shard string) (index, count int) {
	if _, err := fmt.Sscanf(shard, "%d/%d", &index, &count); err != nil || count < 1 || index < 1 || index > count {
		return 1, 1
	}
	return index, count
}

// seedList counts the run's seeds and fingerprints their order: shards of one
// run share it, whatever their share.
func seedList(cases []CaseSpec) (int, string) {
	h := sha256.New()
	n := 0
	for _, c := range cases {
		for _, seed := range c.Seeds {
			fmt.Fprintf(h, "%s\t%s\t%d\t%s\n", c.Scenario, c.Finding, seed, c.ExpectViolation)
			n++
		}
	}
	return n, hex.EncodeToString(h.Sum(nil))[:16]
}

// judge sets the summary's verdict from its cases, its seeds and what
// stopped it early.
func (s *Summary) judge() {
	v := VerdictPass
	for _, c := range s.Cases {
		if c.Verdict != VerdictIncomplete {
			v = worse(v, c.Verdict)
		}
	}
	for _, r := range s.Seeds {
		v = worse(v, r.Verdict)
	}
	if s.NotRun > 0 && !s.IncompleteAccepted {
		v = worse(v, VerdictIncomplete)
	}
	if s.InterruptedBy != "" {
		v = VerdictInterrupted
	}
	s.Verdict = v
}

// Interrupt records that signal (SIGINT, SIGTERM) stopped the run: the
// verdict is interrupted whatever the seeds so far said.
func (s *Summary) Interrupt(signal string) {
	s.InterruptedBy = signal
	s.Stopped = "interrupted by " + signal
	s.judge()
}

// StoppedBy records why seeds were left unrun (a budget, --fail-fast, a dead
// worker); accept makes unrun seeds no reason to fail (--allow-incomplete).
func (s *Summary) StoppedBy(reason string, accept bool) {
	s.Stopped = reason
	s.IncompleteAccepted = accept
	s.judge()
}

// failureGroups groups failing seeds by scenario and the checker of their
// first finding in reading order (a job-level one before any counter
// mismatch: FirstChecker), largest group first; each keeps its first seed's
// replay line.
func failureGroups(seeds []SeedResult) []FailureGroup {
	var groups []FailureGroup
	at := map[[2]string]int{}
	for _, r := range seeds {
		if !failing(r.Verdict) {
			continue
		}
		checker := FirstChecker(r)
		k := [2]string{r.Scenario, checker}
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, FailureGroup{Scenario: r.Scenario, Checker: checker, Verdict: r.Verdict,
				FirstSeed: r.Seed, Finding: r.Finding, Replay: r.Replay})
		}
		groups[i].Count++
		groups[i].Verdict = worse(groups[i].Verdict, r.Verdict)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Count > groups[j].Count })
	return groups
}

func reached(seeds []SeedResult, branch string) bool {
	for _, r := range seeds {
		if r.Branches[branch] > 0 {
			return true
		}
	}
	return false
}

// judgeCase computes one case's result from its seeds (in seed order); mine
// are the case's seeds this summary was to run.
func judgeCase(c CaseSpec, seeds []SeedResult, mine map[uint64]bool) CaseResult {
	cr := CaseResult{CaseSpec: c, Fired: map[string]int{}, Verdict: VerdictPass}
	have := map[uint64]bool{}
	harness := false // a seed's run the harness cut short
	for _, r := range seeds {
		have[r.Seed] = true
		harness = harness || r.Verdict == VerdictHarness
		for k, n := range r.Fired {
			cr.Fired[k] += n
		}
		if r.Verdict == VerdictExpected || (c.ExpectViolation != "" && hasChecker(r, c.ExpectViolation)) {
			cr.ExpectedFound = true
		}
		if r.Verdict == VerdictEnvironment {
			cr.Environment = append(cr.Environment, r.Seed)
		}
		if failing(r.Verdict) {
			cr.Failed = append(cr.Failed, r.Seed)
			cr.Verdict = worse(cr.Verdict, r.Verdict)
		}
	}
	for _, seed := range c.Seeds {
		if !have[seed] {
			cr.Missing = append(cr.Missing, seed)
			if mine[seed] {
				cr.NotRun = append(cr.NotRun, seed)
			}
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
		for _, b := range c.Sometimes {
			if !reached(seeds, b) {
				cr.NeverFired = append(cr.NeverFired, "sometimes "+b+" never reached")
			}
		}
	}
	switch {
	case len(cr.NeverFired) > 0 && harness:
		// The runs the harness cut short may be why: its failure, not the
		// system's, and still no pass.
		cr.Verdict = worse(cr.Verdict, VerdictHarness)
	case len(cr.NeverFired) > 0:
		cr.Verdict = worse(cr.Verdict, VerdictSafety) // a false green fails the gate
	}
	if len(cr.NotRun) > 0 {
		cr.Verdict = worse(cr.Verdict, VerdictIncomplete) // "ok, 0 seeds" is no pass
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

// MissingShardsError is a merge that lacks some of a run's shards: the
// merged summary is incomplete, and this names what to look for.
type MissingShardsError struct {
	Missing []int // 1-based shard indexes
	Count   int
}

func (e *MissingShardsError) Error() string {
	parts := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		parts[i] = fmt.Sprint(m)
	}
	return fmt.Sprintf("merge summaries: shard %s of %d missing: their seeds did not run here",
		strings.Join(parts, ", "), e.Count)
}

// Merge joins shard summaries into one: same format version, suite, system,
// seed list and commit, each shard at most once, no seed twice. Coverage and verdicts
// are judged again over the union, so a kind that fired in one shard only
// counts. When shards are missing, Merge returns the merged (incomplete)
// summary together with a *MissingShardsError.
func Merge(parts []*Summary) (*Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge summaries: nothing to merge")
	}
	first := parts[0]
	var seeds []SeedResult
	seen := map[seedKey]int{}
	shardOf := map[int]int{} // shard index -> part
	wall := 0.0
	var stopped []string
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
		if p.System != first.System {
			return nil, fmt.Errorf("merge summaries: part %d ran system %q, part 1 ran system %q", i+1, p.System, first.System)
		}
		if p.SeedList != first.SeedList {
			return nil, fmt.Errorf("merge summaries: part %d ran seed list %s, part 1 ran %s: not shards of one run",
				i+1, p.SeedList, first.SeedList)
		}
		if p.Provenance.Commit != first.Provenance.Commit {
			return nil, fmt.Errorf("merge summaries: part %d was built from commit %q, part 1 from %q",
				i+1, p.Provenance.Commit, first.Provenance.Commit)
		}
		if p.ShardCount != first.ShardCount {
			return nil, fmt.Errorf("merge summaries: part %d is shard %s, part 1 is shard %s: different shard counts",
				i+1, p.Shard, first.Shard)
		}
		if j, dup := shardOf[p.ShardIndex]; dup {
			return nil, fmt.Errorf("merge summaries: shard %d/%d is in part %d and part %d", p.ShardIndex, p.ShardCount, j, i+1)
		}
		shardOf[p.ShardIndex] = i + 1
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
		if p.Stopped != "" {
			stopped = append(stopped, fmt.Sprintf("shard %d/%d %s", p.ShardIndex, p.ShardCount, p.Stopped))
		}
		wall += p.WallSeconds
	}
	specs := make([]CaseSpec, len(first.Cases))
	for i, c := range first.Cases {
		specs[i] = c.CaseSpec
	}
	m := Build(first.Tool, first.Suite, "", specs, seeds, wall)
	m.System = first.System
	m.NotApplicable = first.NotApplicable
	m.Provenance = first.Provenance
	var missing []int
	for i := 1; i <= first.ShardCount; i++ {
		if _, ok := shardOf[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		err := &MissingShardsError{Missing: missing, Count: first.ShardCount}
		stopped = append(stopped, strings.TrimPrefix(err.Error(), "merge summaries: "))
	}
	accepted := true
	for _, p := range parts {
		accepted = accepted && p.IncompleteAccepted
	}
	if len(stopped) > 0 || accepted {
		m.StoppedBy(strings.Join(stopped, "; "), accepted && len(missing) == 0)
	}
	if len(missing) > 0 {
		return m, &MissingShardsError{Missing: missing, Count: first.ShardCount}
	}
	return m, nil
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
