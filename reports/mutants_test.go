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
