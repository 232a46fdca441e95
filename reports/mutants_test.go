package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A mutant's status comes from the first offset's run; its median and p90
// count only the runs that killed it; the score leaves the other statuses out.
func TestMutantKillFiguresAndScore(t *testing.T) {
	killed := MutantResult{Name: "a", Kind: "catalog", Runs: []MutantKill{
		{Killed: true, Checker: "attempts", Named: true, Seeds: 3, Seconds: 1},
		{Killed: true, Seeds: 10, Seconds: 4},
		{Killed: false, Seeds: 133, SeedsRun: 133, Seconds: 20},
	}}
	killed.Summarize()
	require.Equal(t, MutantKilled, killed.Status)
	require.Equal(t, "attempts", killed.Checker)
	require.Equal(t, 3, killed.SeedsToKill)
	require.InDelta(t, 6.5, killed.MedianSeeds, 1e-9)
	require.InDelta(t, 9.3, killed.P90Seeds, 1e-9)

	survived := MutantResult{Name: "b", Kind: "catalog", Runs: []MutantKill{{Seeds: 133}}}
	survived.Summarize()
	require.Equal(t, MutantSurvived, survived.Status)

	s := &MutantsSummary{Suite: "release", System: "cordum", Mutants: []MutantResult{killed, survived,
		{Name: "c", Kind: "tool", Status: MutantNotReached}, {Name: "d", Kind: "tool", Status: MutantEquivalent},
		{Name: "e", Kind: "catalog", Status: MutantEquivalent}}}
	s.Tally()
	require.InDelta(t, 0.5, s.Score, 1e-9)
	require.Equal(t, []string{"b"}, s.Survivors(), "an equivalent catalog mutant is no survivor")

	var page bytes.Buffer
	require.NoError(t, WriteMutantsHTML(&page, s))
	html := page.String()
	require.Contains(t, html, "score 50.0%")
	require.Contains(t, html, `id="system">system cordum</span>`, "the header names the system the suite ran against")
	require.Contains(t, html, `class="survived"`)
	require.False(t, strings.Contains(html, "<script src="), "the page is self-contained")
}

// A hunt that did not kill counts as longer than any that did: the median
// of three is the slower kill, and with two of three unkilled there is none.
// The page lays the modes out as columns with the first mode's ratio.
func TestHuntMediansAndTable(t *testing.T) {
	seeds := HuntMode{Mode: "seeds", Hunts: []Hunt{
		{Killed: true, Runs: 200, Seconds: 8}, {Killed: false, Runs: 5000, Seconds: 100}, {Killed: true, Runs: 40, Seconds: 2}}}
	seeds.Summarize()
	require.Equal(t, 2, seeds.Kills)
	require.True(t, seeds.Median)
	require.InDelta(t, 200, seeds.MedianRuns, 1e-9)
	require.InDelta(t, 8, seeds.MedianSeconds, 1e-9)

	branch := HuntMode{Mode: "branch", Hunts: []Hunt{{Killed: true, Runs: 30, Seconds: 1}, {Killed: true, Runs: 50, Seconds: 2}}}
	branch.Summarize()
	require.InDelta(t, 1.5, branch.MedianSeconds, 1e-9, "an even count averages the middle two")

	pct := HuntMode{Mode: "pct", Hunts: []Hunt{{Killed: true, Runs: 9, Seconds: 1}, {Runs: 900}, {Runs: 900}}}
	pct.Summarize()
	require.False(t, pct.Median)
	require.Zero(t, pct.MedianRuns)

	s := &MutantsSummary{Suite: "release", HuntModes: []string{"seeds", "branch", "pct"}, HuntBudget: 100, HuntScenario: "sparse-swarm",
		Mutants: []MutantResult{{Name: "deep-one", Kind: Deep, Status: MutantSurvived, Hunts: []HuntMode{seeds, branch, pct}},
			{Name: "a", Kind: "catalog", Status: MutantKilled}}}
	s.Tally()
	require.Equal(t, map[string]int{MutantKilled: 1}, s.Counts, "a deep defect is outside the counts")
	require.Empty(t, s.Survivors(), "and outside the gate")

	var page bytes.Buffer
	require.NoError(t, WriteMutantsHTML(&page, s))
	html := page.String()
	require.Contains(t, html, `id="hunts"`)
	require.Contains(t, html, "on sparse-swarm, once")
	require.Contains(t, html, "200 runs · 8.00s")
	require.Contains(t, html, "<b>5.3x</b>", "seeds' median seconds over branch's")
	require.Contains(t, html, "no median<br><small>1/3 killed")

	s.Mutants = s.Mutants[:1]
	s.Tally()
	page.Reset()
	require.NoError(t, WriteMutantsHTML(&page, s))
	require.Contains(t, page.String(), "deep defects, outside the score", "no score of deep defects alone")
}
