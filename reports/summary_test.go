package reports

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/scenarios"
)

// seed is a SeedResult with a verdict and fault kinds that fired once each.
func seed(scenario string, n uint64, verdict string, fired ...string) SeedResult {
	r := SeedResult{Scenario: scenario, Seed: n, Verdict: verdict, Checksum: "0000000000000001", WallSeconds: float64(n),
		Replay: scenarios.ReplayLine("", scenario, n), Linearizability: "ok"}
	if len(fired) > 0 {
		r.Fired = map[string]int{}
		for _, k := range fired {
			r.Fired[k]++
		}
	}
	if verdict == VerdictSafety || verdict == VerdictExpected {
		r.Violations = []Violation{{Layer: "invariants", Checker: "exactly_once_publish", Job: "j-1", Step: 7, Message: "job j-1 published 2 times"}}
	}
	return r
}

// found is a pinned regression seed's result.
func found(scenario string, n uint64, finding, verdict string) SeedResult {
	r := seed(scenario, n, verdict)
	r.Finding = finding
	return r
}

func TestSeedResultOfVerdict(t *testing.T) {
	inv := checker.Violation{Layer: checker.LayerInvariants, Checker: "exactly_once_publish", Job: "j-1", Step: 9, Time: time.Second}
	live := checker.Violation{Layer: checker.LayerLiveness, Checker: "job_terminal", Job: "j-2", Step: 3}
	lin := checker.Violation{Layer: checker.LayerLinearization, Checker: "job_lifecycle", Job: "j-3"}
	execSame := checker.Violation{Layer: checker.LayerInvariants, Checker: "exactly_once_execution", Job: "j-1", Step: 12}
	execOther := checker.Violation{Layer: checker.LayerInvariants, Checker: "exactly_once_execution", Job: "j-9", Step: 12}
	harness := checker.Violation{Layer: checker.LayerHarness, Checker: "harness_fault", Step: 7, Message: "harness fault in controller"}
	cases := []struct {
		name   string
		vs     []checker.Violation
		lin    checker.LinOutcome
		expect string
		want   string
	}{
		{"clean", nil, checker.LinOk, "", VerdictPass},
		{"clean with an expectation", nil, checker.LinOk, "exactly_once_publish", VerdictPass},
		{"invariant", []checker.Violation{inv}, checker.LinOk, "", VerdictSafety},
		{"liveness only", []checker.Violation{live}, checker.LinOk, "", VerdictLiveness},
		{"safety beats liveness", []checker.Violation{live, inv}, checker.LinOk, "", VerdictSafety},
		{"illegal history", []checker.Violation{lin}, checker.LinIllegal, "", VerdictSafety},
		{"unknown", nil, checker.LinUnknown, "", VerdictInconclusive},
		{"expected only", []checker.Violation{inv, inv}, checker.LinOk, "exactly_once_publish", VerdictExpected},
		{"expected and liveness", []checker.Violation{inv, live}, checker.LinOk, "exactly_once_publish", VerdictLiveness},
		{"expected is another checker", []checker.Violation{inv}, checker.LinOk, "no_resurrection", VerdictSafety},
		{"expected explains its job's duplicate execution", []checker.Violation{inv, execSame}, checker.LinOk, "exactly_once_publish", VerdictExpected},
		{"expected does not explain another job", []checker.Violation{inv, execOther}, checker.LinOk, "exactly_once_publish", VerdictSafety},
		{"expected does not explain another layer", []checker.Violation{inv, {Layer: checker.LayerLiveness, Checker: "job_terminal", Job: "j-1"}}, checker.LinOk, "exactly_once_publish", VerdictLiveness},
		{"expected but unknown", []checker.Violation{inv}, checker.LinUnknown, "exactly_once_publish", VerdictInconclusive},
		{"harness fault", []checker.Violation{harness}, checker.LinSkipped, "", VerdictHarness},
		{"a harness fault is not the system's safety violation", []checker.Violation{harness, inv}, checker.LinIllegal, "", VerdictHarness},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := &scenarios.Outcome{Scenario: "s", Seed: 42, Checksum: 0xbeef, Steps: 10,
				Result: &checker.Result{Violations: c.vs, Linearizability: c.lin}, Wall: 1500 * time.Millisecond}
			r := SeedResultOf(runOf(o), c.expect)
			require.Equal(t, c.want, r.Verdict)
			require.Equal(t, "000000000000beef", r.Checksum)
			require.Equal(t, "simrun replay --scenario s --seed 42", r.Replay)
			require.Len(t, r.Violations, len(c.vs))
			require.InDelta(t, 1.5, r.WallSeconds, 1e-9)
		})
	}
}

func TestBuild(t *testing.T) {
	cases := []CaseSpec{
		{Scenario: "b", Seeds: []uint64{1, 2, 3}, Declared: []string{"K1", "K2"}},
		{Scenario: "a", Seeds: []uint64{5}, Finding: "dup-publish"},
		{Scenario: "x", Seeds: []uint64{10, 11}, Declared: []string{"K1"}, ExpectViolation: "exactly_once_publish"},
	}
	t.Run("all pass", func(t *testing.T) {
		s := Build("t", "release", "", cases, []SeedResult{
			seed("x", 11, VerdictExpected, "K1"), seed("b", 2, VerdictPass, "K2"), seed("b", 1, VerdictPass, "K1"),
			found("a", 5, "dup-publish", VerdictPass), seed("b", 3, VerdictPass), seed("x", 10, VerdictPass),
		}, 9)
		require.Equal(t, VerdictPass, s.Verdict)
		require.Equal(t, 0, s.ExitCode())
		require.Equal(t, SummaryVersion, s.Version)
		require.Equal(t, "b1 b2 b3 a5 x10 x11", scenarioSeeds(s.Seeds), "sorted by case order, then seed")
		require.True(t, s.Cases[2].ExpectedFound)
		require.Empty(t, s.Cases[2].Failed, "an expected violation is not a failure")
		require.Equal(t, map[string]int{"K1": 2, "K2": 1}, s.Coverage.Fired)
		for _, c := range s.Cases {
			require.True(t, c.Passed, c.Scenario)
			require.NotNil(t, c.Fired)
		}
	})
	t.Run("failing seeds and the worst verdict", func(t *testing.T) {
		s := Build("t", "release", "", cases, []SeedResult{
			seed("b", 1, VerdictLiveness, "K1", "K2"), seed("b", 2, VerdictPass), seed("b", 3, VerdictInconclusive),
			found("a", 5, "dup-publish", VerdictSafety), seed("x", 10, VerdictExpected, "K1"), seed("x", 11, VerdictPass),
		}, 1)
		require.Equal(t, []uint64{1, 3}, s.Cases[0].Failed)
		require.Equal(t, VerdictLiveness, s.Cases[0].Verdict)
		require.Equal(t, VerdictSafety, s.Cases[1].Verdict)
		require.Equal(t, VerdictSafety, s.Verdict)
		require.Equal(t, 1, s.ExitCode())
	})
	t.Run("never fired is a false green", func(t *testing.T) {
		s := Build("t", "release", "", cases[:1], []SeedResult{
			seed("b", 1, VerdictPass, "K1"), seed("b", 2, VerdictPass), seed("b", 3, VerdictPass),
		}, 1)
		require.Equal(t, []string{"K2"}, s.Cases[0].NeverFired)
		require.Equal(t, VerdictSafety, s.Cases[0].Verdict)
		require.False(t, s.Cases[0].Passed)
		require.Equal(t, VerdictSafety, s.Verdict)
	})
	t.Run("never fired is judged only when complete", func(t *testing.T) {
		// Shard 2/2 holds every second seed of the run: b2, a5, x11.
		s := Build("t", "release", "2/2", cases, []SeedResult{seed("b", 2, VerdictPass), found("a", 5, "dup-publish", VerdictPass),
			seed("x", 11, VerdictPass)}, 1)
		require.Equal(t, []uint64{1, 3}, s.Cases[0].Missing)
		require.Empty(t, s.Cases[1].Missing)
		require.Equal(t, []uint64{10}, s.Cases[2].Missing)
		for _, c := range s.Cases {
			require.Empty(t, c.NeverFired, c.Scenario)
			require.Empty(t, c.NotRun, "another shard's seeds are not this one's to run")
			require.True(t, c.Passed, c.Scenario)
		}
		require.Equal(t, VerdictPass, s.Verdict)
		require.Equal(t, "2/2", s.Shard)
		require.Equal(t, 2, s.ShardIndex)
		require.Equal(t, 2, s.ShardCount)
		require.Equal(t, 3, s.Planned)
		require.Equal(t, 6, s.SuiteSeeds)
	})
	t.Run("seeds not run make it incomplete, never a pass", func(t *testing.T) {
		s := Build("t", "release", "", cases[:1], []SeedResult{seed("b", 1, VerdictPass, "K1", "K2")}, 1)
		require.Equal(t, []uint64{2, 3}, s.Cases[0].NotRun)
		require.Equal(t, VerdictIncomplete, s.Cases[0].Verdict)
		require.False(t, s.Cases[0].Passed)
		require.Equal(t, VerdictIncomplete, s.Verdict)
		require.Equal(t, ExitIncomplete, s.ExitCode())
		require.Equal(t, 3, s.Planned)
		require.Equal(t, 2, s.NotRun)

		s.StoppedBy("budget 1s spent", true)
		require.Equal(t, VerdictPass, s.Verdict, "--allow-incomplete accepts unrun seeds")
		require.True(t, s.IncompleteAccepted)

		s = Build("t", "release", "1/2", cases[:1], nil, 1)
		require.Equal(t, []uint64{1, 3}, s.Cases[0].NotRun, "shard 1/2's own seeds")
		require.Equal(t, VerdictIncomplete, s.Verdict, "a shard that ran nothing is no pass")
	})
	t.Run("a failure outranks incomplete, an interrupt outranks both", func(t *testing.T) {
		s := Build("t", "release", "", cases[:1], []SeedResult{seed("b", 1, VerdictSafety)}, 1)
		require.Equal(t, VerdictSafety, s.Verdict)
		s.Interrupt("SIGTERM")
		require.Equal(t, VerdictInterrupted, s.Verdict)
		require.Equal(t, 143, s.ExitCode())
		s.Interrupt("SIGINT")
		require.Equal(t, 130, s.ExitCode())
		require.Equal(t, "interrupted by SIGINT", s.Stopped)
	})
	t.Run("failures are grouped by scenario and first checker", func(t *testing.T) {
		live := seed("b", 3, VerdictLiveness)
		live.Violations = []Violation{{Layer: "liveness", Checker: "job_terminal"}}
		s := Build("t", "release", "", cases, []SeedResult{seed("b", 1, VerdictSafety), seed("b", 2, VerdictSafety), live,
			found("a", 5, "dup-publish", VerdictPass), seed("x", 10, VerdictSafety), seed("x", 11, VerdictPass)}, 1)
		require.Len(t, s.Groups, 3)
		require.Equal(t, FailureGroup{Scenario: "b", Checker: "exactly_once_publish", Verdict: VerdictSafety, Count: 2,
			FirstSeed: 1, Replay: "simrun replay --scenario b --seed 1"}, s.Groups[0])
		require.Equal(t, "job_terminal", s.Groups[1].Checker)
		require.Equal(t, "x", s.Groups[2].Scenario, "an expected violation alone is no failure, x10 failed for safety")
	})
	t.Run("expected violation missing", func(t *testing.T) {
		s := Build("t", "release", "", cases[2:], []SeedResult{seed("x", 10, VerdictPass, "K1"), seed("x", 11, VerdictPass)}, 1)
		require.Equal(t, []string{"expected violation exactly_once_publish"}, s.Cases[0].NeverFired)
		require.False(t, s.Cases[0].ExpectedFound)
		require.Equal(t, VerdictSafety, s.Verdict)
	})
	t.Run("expected violation next to another failure", func(t *testing.T) {
		r := seed("x", 10, VerdictLiveness, "K1")
		r.Violations = []Violation{{Layer: "invariants", Checker: "exactly_once_publish"}, {Layer: "liveness", Checker: "job_terminal"}}
		s := Build("t", "release", "", cases[2:], []SeedResult{r, seed("x", 11, VerdictPass)}, 1)
		require.True(t, s.Cases[0].ExpectedFound, "found, though the seed failed for something else")
		require.Equal(t, []uint64{10}, s.Cases[0].Failed)
		require.Equal(t, VerdictLiveness, s.Verdict)
		require.Equal(t, 3, s.ExitCode())
	})
	t.Run("a finding separates cases of one scenario", func(t *testing.T) {
		cs := []CaseSpec{{Scenario: "a", Seeds: []uint64{5}, Finding: "dup"}, {Scenario: "a", Seeds: []uint64{5, 6}}}
		pinned := found("a", 5, "dup", VerdictSafety)
		s := Build("t", "release", "", cs, []SeedResult{seed("a", 5, VerdictPass), seed("a", 6, VerdictPass), pinned}, 1)
		require.Equal(t, VerdictSafety, s.Cases[0].Verdict)
		require.Equal(t, VerdictPass, s.Cases[1].Verdict)
		require.Equal(t, "dup", s.Seeds[0].Finding)
	})
	t.Run("a seed no case claims still counts", func(t *testing.T) {
		s := Build("t", "release", "", cases[:1], []SeedResult{seed("b", 1, VerdictPass), seed("b", 2, VerdictPass),
			seed("b", 3, VerdictPass), seed("zz", 1, VerdictSafety)}, 1)
		require.Equal(t, "zz", s.Seeds[len(s.Seeds)-1].Scenario)
		require.Equal(t, VerdictSafety, s.Verdict)
	})
}

func scenarioSeeds(rs []SeedResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Scenario + strconv.FormatUint(r.Seed, 10)
	}
	return strings.Join(parts, " ")
}

func TestExitCode(t *testing.T) {
	for verdict, code := range map[string]int{VerdictPass: 0, VerdictSafety: 1, VerdictLiveness: 3, VerdictInconclusive: 4,
		VerdictIncomplete: 6, VerdictHarness: 7, "": 1, "bogus": 1} {
		require.Equal(t, code, (&Summary{Verdict: verdict}).ExitCode(), verdict)
	}
}

// A seed the harness failed fails its case and the run (exit 7), outranks an
// undecided check and unrun seeds, and yields to the system's own failures
// elsewhere in the run.
func TestAHarnessFaultFailsTheRunBelowTheSystemsFailures(t *testing.T) {
	cases := []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2, 3}}}
	build := func(verdicts ...string) *Summary {
		var seeds []SeedResult
		for i, v := range verdicts {
			seeds = append(seeds, seed("b", uint64(i+1), v))
		}
		return Build("t", "release", "1/1", cases, seeds, 1)
	}
	s := build(VerdictPass, VerdictHarness, VerdictPass)
	require.Equal(t, VerdictHarness, s.Verdict)
	require.Equal(t, ExitHarness, s.ExitCode())
	require.False(t, s.Cases[0].Passed)
	require.Equal(t, []uint64{2}, s.Cases[0].Failed)
	require.Equal(t, VerdictHarness, build(VerdictPass, VerdictHarness).Verdict, "unrun seeds do not hide it")
	require.Equal(t, VerdictHarness, build(VerdictInconclusive, VerdictHarness, VerdictPass).Verdict)
	require.Equal(t, VerdictLiveness, build(VerdictLiveness, VerdictHarness, VerdictPass).Verdict)
	require.Equal(t, VerdictSafety, build(VerdictHarness, VerdictSafety, VerdictPass).Verdict)

	// A declared kind that never fired in a case whose runs the harness cut
	// short is the harness's failure too; without a harness seed, a false
	// green.
	declared := []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2}, Declared: []string{"K1"}}}
	s = Build("t", "release", "1/1", declared, []SeedResult{seed("b", 1, VerdictPass), seed("b", 2, VerdictHarness)}, 1)
	require.Equal(t, []string{"K1"}, s.Cases[0].NeverFired)
	require.Equal(t, VerdictHarness, s.Verdict)
	s = Build("t", "release", "1/1", declared, []SeedResult{seed("b", 1, VerdictPass), seed("b", 2, VerdictPass)}, 1)
	require.Equal(t, VerdictSafety, s.Verdict)
}

func TestMerge(t *testing.T) {
	cases := []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2, 3, 4}, Declared: []string{"K1", "K2"}}}
	shard1 := Build("t", "release", "1/2", cases, []SeedResult{seed("b", 1, VerdictPass, "K1"), seed("b", 3, VerdictPass)}, 2)
	shard2 := Build("t", "release", "2/2", cases, []SeedResult{seed("b", 2, VerdictPass, "K2"), seed("b", 4, VerdictLiveness)}, 3)
	require.Empty(t, shard1.Cases[0].NeverFired, "a shard does not judge coverage")
	require.Equal(t, VerdictPass, shard1.Verdict)

	m, err := Merge([]*Summary{shard2, shard1})
	require.NoError(t, err)
	require.Equal(t, "", m.Shard)
	require.InDelta(t, 5.0, m.WallSeconds, 1e-9)
	require.Len(t, m.Seeds, 4)
	require.Equal(t, uint64(1), m.Seeds[0].Seed)
	require.Empty(t, m.Cases[0].Missing)
	require.Empty(t, m.Cases[0].NeverFired, "K1 and K2 fired in different shards")
	require.Equal(t, []uint64{4}, m.Cases[0].Failed)
	require.Equal(t, VerdictLiveness, m.Verdict)

	// Coverage is judged after the merge: K2 never fired anywhere.
	lone := Build("t", "release", "1/1", cases, []SeedResult{seed("b", 1, VerdictPass, "K1"), seed("b", 2, VerdictPass),
		seed("b", 3, VerdictPass), seed("b", 4, VerdictPass)}, 1)
	lone.Cases[0].NeverFired = nil
	m, err = Merge([]*Summary{lone})
	require.NoError(t, err)
	require.Equal(t, []string{"K2"}, m.Cases[0].NeverFired)

	t.Run("a missing shard", func(t *testing.T) {
		m, err := Merge([]*Summary{shard1})
		var missing *MissingShardsError
		require.ErrorAs(t, err, &missing)
		require.Equal(t, []int{2}, missing.Missing)
		require.EqualError(t, err, "merge summaries: shard 2 of 2 missing: their seeds did not run here")
		require.NotNil(t, m, "the shards that came are still merged")
		require.Equal(t, VerdictIncomplete, m.Verdict)
		require.Equal(t, 2, m.NotRun)
		require.Contains(t, m.Stopped, "shard 2 of 2 missing")
	})

	t.Run("errors", func(t *testing.T) {
		old := *shard2
		old.Version = 7
		_, err := Merge([]*Summary{shard1, &old})
		require.ErrorContains(t, err, "format version 7")
		require.ErrorContains(t, err, "reads version 2")

		other := *shard2
		other.Suite = "exploratory"
		_, err = Merge([]*Summary{shard1, &other})
		require.ErrorContains(t, err, `suite "exploratory"`)

		_, err = Merge([]*Summary{shard1, shard1})
		require.ErrorContains(t, err, "shard 1/2 is in part 1 and part 2")

		otherCommit := *shard2
		otherCommit.Provenance.Commit = "abc"
		_, err = Merge([]*Summary{shard1, &otherCommit})
		require.ErrorContains(t, err, `commit "abc"`)

		otherSeeds := Build("t", "release", "2/2", []CaseSpec{{Scenario: "b", Seeds: []uint64{1, 2, 3, 5}, Declared: []string{"K1", "K2"}}}, nil, 1)
		_, err = Merge([]*Summary{shard1, otherSeeds})
		require.ErrorContains(t, err, "not shards of one run")

		three := Build("t", "release", "2/3", cases, nil, 1)
		_, err = Merge([]*Summary{shard1, three})
		require.ErrorContains(t, err, "different shard counts")

		diff := *shard2
		diff.Cases = []CaseResult{{CaseSpec: CaseSpec{Scenario: "b", Seeds: []uint64{1, 2, 3}}}}
		_, err = Merge([]*Summary{shard1, &diff})
		require.ErrorContains(t, err, "differs")

		_, err = Merge(nil)
		require.Error(t, err)
	})
}

func TestReadSummary(t *testing.T) {
	dir := t.TempDir()
	s := Build("t", "release", "", []CaseSpec{{Scenario: "b", Seeds: []uint64{1}}}, []SeedResult{seed("b", 1, VerdictSafety)}, 1)
	path := filepath.Join(dir, "summary.json")
	require.NoError(t, WriteJSONAtomic(path, s))
	back, err := ReadSummary(path)
	require.NoError(t, err)
	require.Equal(t, s, back)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"wall_seconds"`)
	require.Contains(t, string(raw), `"scenario": "b"`)

	bad := filepath.Join(dir, "v99.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 99, "suite": "release"}`), 0o644))
	_, err = ReadSummary(bad)
	require.ErrorContains(t, err, "format version 99, this build reads version 2")

	none := filepath.Join(dir, "none.json")
	require.NoError(t, os.WriteFile(none, []byte(`{"suite": "release"}`), 0o644))
	_, err = ReadSummary(none)
	require.ErrorContains(t, err, "no format version")
}

// A seed whose every violation the environment explains is labelled so and
// does not fail its case; one violation of the system's beside them does.
func TestEnvironmentVerdict(t *testing.T) {
	env := checker.Violation{Layer: checker.LayerEnvironment, Checker: "no_resurrection", Job: "j1"}
	res := &checker.Result{Violations: []checker.Violation{env}, Linearizability: checker.LinOk}
	require.Equal(t, VerdictEnvironment, seedVerdict(res, ""))
	require.False(t, failing(seedVerdict(res, "")))

	res.Violations = append(res.Violations, checker.Violation{Layer: checker.LayerInvariants, Checker: "no_resurrection", Job: "j2"})
	require.Equal(t, VerdictSafety, seedVerdict(res, ""))

	cr := judgeCase(CaseSpec{Scenario: "s", Seeds: []uint64{1, 2}}, []SeedResult{
		{Scenario: "s", Seed: 1, Verdict: VerdictEnvironment}, {Scenario: "s", Seed: 2, Verdict: VerdictPass}},
		map[uint64]bool{1: true, 2: true})
	require.Equal(t, VerdictPass, cr.Verdict)
	require.Equal(t, []uint64{1}, cr.Environment)
	require.Empty(t, cr.Failed)
}
