package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chartSuite is 100 seeds of scenario a taking 0.01s to 1.00s (seed n takes
// n/100 s), two of them failing, plus one seed of b that found what it was
// meant to; kind K is declared by a and never fired.
func chartSuite() *Summary {
	var seeds []SeedResult
	for n := uint64(1); n <= 100; n++ {
		v := VerdictPass
		if n == 40 || n == 41 {
			v = VerdictSafety
		}
		r := seed("a", n, v, "PublishFailsAfterStored")
		r.WallSeconds = float64(n) / 100
		seeds = append(seeds, r)
	}
	seeds = append(seeds, seed("b", 1, VerdictExpected))
	seeds[len(seeds)-1].Branches = map[string]int{"publish_rollback": 3}
	seeds[len(seeds)-1].WallSeconds = math.NaN() // a broken time is left out, not drawn
	aSeeds := make([]uint64, 100)
	for i := range aSeeds {
		aSeeds[i] = uint64(i + 1)
	}
	return Build("simrun test", "release", "", []CaseSpec{
		{Scenario: "a", Seeds: aSeeds, Declared: []string{"K", "PublishFailsAfterStored"}},
		{Scenario: "b", Seeds: []uint64{1}},
	}, seeds, 3)
}

func TestChartsFromSummary(t *testing.T) {
	cv := buildCharts(chartSuite())

	require.Equal(t, []string{VerdictPass, VerdictExpected, VerdictSafety}, cv.VerdictKeys)
	require.Len(t, cv.Verdicts.Numbers, 2)
	a := cv.Verdicts.Numbers[0]
	require.Equal(t, "a", a.Name)
	require.Equal(t, 100, a.Total)
	require.Equal(t, []int{98, 0, 2}, a.ByKey)
	require.Len(t, cv.Verdicts.Rows[0].Segs, 2, "pass and safety; no empty segment")
	require.InDelta(t, cv.Verdicts.PlotW, cv.Verdicts.Rows[0].Segs[0].W+cv.Verdicts.Rows[0].Segs[1].W, 1e-9,
		"the largest scenario fills the plot")

	require.Equal(t, "PublishFailsAfterStored", cv.Faults.Numbers[0].Name)
	require.Equal(t, 100, cv.Faults.Numbers[0].Total)
	require.Equal(t, "K", cv.Faults.Numbers[1].Name, "a declared kind that never fired is listed")
	require.Equal(t, "zero", cv.Faults.Numbers[1].Class)
	require.Empty(t, cv.Faults.Rows[1].Segs)
	require.Equal(t, 3, cv.Branches.Numbers[0].Total)

	w := cv.Wall
	nums := map[string]string{}
	for _, o := range w.Numbers {
		nums[o.Name] = o.Value
	}
	require.Equal(t, "100", nums["seeds"], "the NaN time is left out")
	require.Equal(t, "0.01s", nums["fastest"])
	require.Equal(t, "0.51s", nums["p50"]) // median of 0.01..1.00 is 0.505, rounded
	require.Equal(t, "0.90s", nums["p90"])
	require.Equal(t, "0.99s", nums["p99"])
	require.Equal(t, "1.00s", nums["slowest"])
	require.Len(t, w.Marks, 3)
	require.Less(t, w.Marks[0].X, w.Marks[1].X)
	require.Less(t, w.Marks[1].X, w.Marks[2].X)
	total := 0
	for _, b := range w.Bars {
		require.Greater(t, b.H, 0.0)
		require.LessOrEqual(t, b.Y+b.H, w.PlotBottom+1e-9)
		total++
	}
	require.Equal(t, histBins, total, "seeds spread evenly fill every bin")
}

func TestChartsOfAnEmptySummary(t *testing.T) {
	cv := buildCharts(Build("simrun test", "release", "", nil, nil, 0))
	require.Empty(t, cv.Verdicts.Rows)
	require.Empty(t, cv.Wall.Bars)
	var buf bytes.Buffer
	require.NoError(t, WriteIndex(&buf, Build("simrun test", "release", "", nil, nil, 0)))
	require.Contains(t, buf.String(), "No seed times.")
}

func TestIndexShowsChartsWithTheirNumbers(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteIndex(&buf, chartSuite()))
	html := buf.String()
	for _, id := range []string{"charts", "chart-verdicts", "chart-faults", "chart-branches", "chart-wall"} {
		require.Contains(t, html, `id="`+id+`"`)
	}
	require.Contains(t, html, `<td>p90</td><td class="num">0.90s</td>`)
	require.Contains(t, html, `<tr class="zero"><td>K</td><td class="num">0</td></tr>`)
	require.Contains(t, html, `<text class="p99"`)
	require.Equal(t, 1, strings.Count(html, `<section id="charts"`))
	for _, ref := range []string{`src="http`, `href="http`, "@import", "url(http"} {
		require.NotContains(t, html, ref, "self-contained")
	}
}
