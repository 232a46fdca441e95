package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// failingWith is a failing seed found by the named checkers.
func failingWith(scenario string, n uint64, verdict string, checkers ...string) SeedResult {
	r := seed(scenario, n, verdict)
	r.Violations = nil
	for _, c := range checkers {
		r.Violations = append(r.Violations, Violation{Layer: "invariants", Checker: c, Job: "j-1", Step: 9})
	}
	r.Artifacts = scenario + "/seed"
	return r
}

func withChecksum(r SeedResult, sum string) SeedResult {
	r.Checksum = sum
	return r
}

// diffPair is a baseline and a new run with one seed of every class.
func diffPair() (base, next *Summary) {
	baseSeeds := []SeedResult{
		seed("a", 1, VerdictPass),                             // 1: newly failing
		failingWith("a", 2, VerdictSafety, "no_resurrection"), // 2: still failing, same checker
		failingWith("a", 3, VerdictSafety, "no_resurrection"), // 3: still failing, other checker
		failingWith("a", 4, VerdictLiveness, "job_terminal"),  // 4: fixed
		seed("a", 5, VerdictPass),                             // 5: passing, same checksum
		seed("a", 6, VerdictPass),                             // 6: passing, other checksum
		seed("a", 7, VerdictPass),                             // 7: removed
		seed("b", 1, VerdictExpected),                         // expected both times: passing
	}
	nextSeeds := []SeedResult{
		failingWith("a", 1, VerdictSafety, "exactly_once_publish"),
		failingWith("a", 2, VerdictSafety, "no_resurrection"),
		failingWith("a", 3, VerdictSafety, "no_resurrection", "transition_graph"),
		seed("a", 4, VerdictPass),
		seed("a", 5, VerdictPass),
		withChecksum(seed("a", 6, VerdictPass), "00000000000000ff"),
		seed("a", 8, VerdictPass),                            // new seed
		failingWith("a", 9, VerdictLiveness, "job_terminal"), // new seed, failing: newly failing
		withChecksum(seed("b", 1, VerdictExpected), "0000000000000abc"),
	}
	spec := []CaseSpec{{Scenario: "a", Seeds: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}}, {Scenario: "b", Seeds: []uint64{1}}}
	return Build("simrun main", "release", "", spec, baseSeeds, 1), Build("simrun pr", "release", "", spec, nextSeeds, 1)
}

func classOf(t *testing.T, d *Diff, scenario string, n uint64) SeedDiff {
	t.Helper()
	for _, s := range d.Seeds {
		if s.Scenario == scenario && s.Seed == n {
			return s
		}
	}
	t.Fatalf("%s seed %d is not in the diff", scenario, n)
	return SeedDiff{}
}

func TestDiffClassifiesEverySeed(t *testing.T) {
	base, next := diffPair()
	d, err := CompareSummaries(base, next, "main-out", "pr-out")
	require.NoError(t, err)

	for _, c := range []struct {
		scenario string
		seed     uint64
		class    string
	}{
		{"a", 1, DiffNewlyFailing},
		{"a", 2, DiffStillFailingSame},
		{"a", 3, DiffStillFailingOther},
		{"a", 4, DiffFixed},
		{"a", 5, DiffPassing},
		{"a", 6, DiffPassing},
		{"a", 7, DiffRemoved},
		{"a", 8, DiffNewSeed},
		{"a", 9, DiffNewlyFailing},
		{"b", 1, DiffPassing},
	} {
		require.Equal(t, c.class, classOf(t, d, c.scenario, c.seed).Class, "%s seed %d", c.scenario, c.seed)
	}
	require.Equal(t, map[string]int{DiffNewlyFailing: 2, DiffStillFailingSame: 1, DiffStillFailingOther: 1, DiffFixed: 1,
		DiffNewSeed: 1, DiffRemoved: 1, DiffPassing: 3}, d.Counts)
	require.Len(t, d.Seeds, 10, "every seed of either run, once")

	require.Equal(t, 2, d.ChecksumChanged, "a 6 and b 1 kept their verdict under another checksum")
	require.True(t, classOf(t, d, "a", 6).ChecksumChanged)
	require.False(t, classOf(t, d, "a", 5).ChecksumChanged)
	require.False(t, classOf(t, d, "a", 1).ChecksumChanged, "a changed verdict is its own news")

	first := d.Seeds[0]
	require.Equal(t, DiffNewlyFailing, first.Class, "newly failing seeds come first")
	require.Equal(t, []string{"exactly_once_publish"}, first.NewCheckers)
	require.Equal(t, "a/seed/report.html", first.Report)
	require.Contains(t, first.Replay, "simrun replay --scenario a --seed 1")
	require.Equal(t, []string{"no_resurrection", "transition_graph"}, classOf(t, d, "a", 3).NewCheckers)
	require.Empty(t, classOf(t, d, "a", 7).NewVerdict, "removed: not run now")
	require.Empty(t, classOf(t, d, "a", 8).BaseVerdict, "new: not run before")

	require.Equal(t, 1, d.ExitCode(false))
	require.Equal(t, 1, d.ExitCode(true))
}

func TestDiffExitCodes(t *testing.T) {
	base, next := diffPair()
	// Only still-failing seeds: pass by default, fail with --fail-on-any.
	next.Seeds = []SeedResult{failingWith("a", 2, VerdictSafety, "no_resurrection"), seed("a", 1, VerdictPass)}
	d, err := CompareSummaries(base, next, "", "")
	require.NoError(t, err)
	require.Zero(t, d.Counts[DiffNewlyFailing])
	require.Equal(t, 0, d.ExitCode(false))
	require.Equal(t, 1, d.ExitCode(true))

	// Every seed passing and fixed: 0 either way.
	next.Seeds = []SeedResult{seed("a", 2, VerdictPass)}
	d, err = CompareSummaries(base, next, "", "")
	require.NoError(t, err)
	require.Equal(t, 0, d.ExitCode(true))
}

func TestDiffRefusesBadPairs(t *testing.T) {
	base, next := diffPair()
	other := *next
	other.Suite = "exploratory"
	_, err := CompareSummaries(base, &other, "", "")
	require.ErrorContains(t, err, `suite "release" and the new run suite "exploratory"`)
	_, err = CompareSummaries(nil, next, "", "")
	require.Error(t, err)
	dup := *next
	dup.Seeds = append(append([]SeedResult(nil), next.Seeds...), next.Seeds[0])
	_, err = CompareSummaries(base, &dup, "", "")
	require.ErrorContains(t, err, "twice")
}

func TestDiffOutputs(t *testing.T) {
	base, next := diffPair()
	next.Seeds[0].Scenario = "a|<b>" // a hostile name stays text in every output; a 1 is now removed
	base.System, next.System = "outbox", "outbox"
	d, err := CompareSummaries(base, next, "main-out", "pr-out")
	require.NoError(t, err)
	require.Equal(t, "outbox", d.New.System)

	var text bytes.Buffer
	require.NoError(t, d.WriteText(&text))
	require.Contains(t, text.String(), "newly failing                       2")
	require.Contains(t, text.String(), "(2 seeds kept their verdict under another checksum)")
	require.Contains(t, text.String(), "a seed 9: liveness (job_terminal)")

	var md bytes.Buffer
	require.NoError(t, d.WriteMarkdown(&md))
	require.Contains(t, md.String(), "### dispatchsim release: 2 newly failing")
	require.Contains(t, md.String(), "| newly failing | 2 |")
	require.Contains(t, md.String(), "| same verdict, other checksum | 2 |")
	require.Contains(t, md.String(), `a\|&lt;b&gt; seed 1`)

	var page bytes.Buffer
	require.NoError(t, d.WriteHTML(&page))
	html := page.String()
	require.Contains(t, html, `<span class="big" id="headline">2 newly failing</span>`)
	require.Equal(t, 2, strings.Count(html, "system <b>outbox</b>"), "each side names its system")
	require.Contains(t, html, `<section id="newly_failing"`)
	require.Contains(t, html, `<section id="removed"`)
	require.Contains(t, html, "passing in both, with another checksum")
	require.NotContains(t, html, "a|<b>")
	require.Contains(t, html, `href="a/seed/report.html"`)

	b, err := json.Marshal(d)
	require.NoError(t, err)
	var back Diff
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, d.Counts, back.Counts)
	require.Equal(t, DiffVersion, back.Version)
}
