package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"golang.org/x/exp/stats"
)

// Geometry of the index's charts, in SVG user units (they scale to the page).
const (
	chartWidth  = 640.0
	chartLabel  = 210.0 // the label column of a bar chart
	chartCount  = 56.0  // room for the number after the longest bar
	chartRow    = 20.0
	chartBar    = 13.0
	chartTop    = 6.0
	histHeight  = 150.0 // the plot area of the wall-time histogram
	histBottom  = 34.0  // its axis labels
	histTop     = 40.0  // its quantile labels
	histBins    = 24
	labelRunes  = 34 // longer labels are cut; the full name is in a title
	maxBarLines = 40 // bar charts list their first 40 rows; the numbers list them all
)

// chartsView is the index's pictures: what ran and how it ended, which faults
// fired, which risky branches ran, and where the time went. Every chart comes
// with its numbers as a table.
type chartsView struct {
	Verdicts barChart
	// VerdictKeys are the verdicts that occur, in legend order.
	VerdictKeys []string
	Faults      barChart
	Branches    barChart
	Wall        histChart
}

// barChart is a horizontal bar chart; a row's bar may be stacked.
type barChart struct {
	Width, Height float64
	PlotX, PlotW  float64 // where bars start, and the longest bar's length
	Rows          []barRow
	Cut           int // rows not drawn (the numbers still list them)
	Numbers       []barRow
}

type barRow struct {
	Name, Label string
	Y, TextY    float64
	Segs        []barSeg
	Total       int
	CountX      float64
	Class       string // a row class: "zero" for a declared kind that never fired
	ByKey       []int  // per VerdictKeys, for the verdict chart's numbers
}

type barSeg struct {
	X, W  float64
	Class string
	Title string
}

// histChart is the distribution of seed wall times.
type histChart struct {
	Width, Height float64
	Bars          []histBar
	Marks         []histMark
	Ticks         []histTick
	Numbers       []Option
	Seeds         int
	Most          int // seeds in the tallest bar
	PlotTop       float64
	PlotBottom    float64
}

type histBar struct {
	X, Y, W, H float64
	Title      string
}

type histMark struct {
	X, LabelY     float64
	Label, Anchor string
	Class         string
}

type histTick struct {
	X     float64
	Label string
}

// verdictOrder is the legend's order of verdicts; any verdict this build does
// not know is drawn after them, as "other".
var verdictOrder = []string{VerdictPass, VerdictExpected, VerdictEnvironment, VerdictSafety, VerdictLiveness, VerdictInconclusive,
	VerdictHarness}

// buildCharts computes the index's charts from the summary alone.
func buildCharts(s *Summary) chartsView {
	var cv chartsView
	declared := map[string]bool{}
	for _, c := range s.Cases {
		for _, k := range c.Declared {
			declared[k] = true
		}
	}
	cv.Verdicts, cv.VerdictKeys = verdictChart(s.Seeds)
	fired := maps.Clone(s.Coverage.Fired)
	if fired == nil {
		fired = map[string]int{}
	}
	for k := range declared {
		if _, ok := fired[k]; !ok {
			fired[k] = 0 // declared, never fired: the row that matters most
		}
	}
	cv.Faults = countChart(fired, func(k string) string {
		if declared[k] && fired[k] == 0 {
			return "zero"
		}
		return ""
	})
	cv.Branches = countChart(s.Coverage.Branches, func(k string) string {
		if s.Coverage.Branches[k] == 0 {
			return "zero"
		}
		return ""
	})
	cv.Wall = wallChart(s.Seeds)
	return cv
}

// verdictChart stacks each scenario's seeds by verdict.
func verdictChart(seeds []SeedResult) (barChart, []string) {
	counts := map[string]map[string]int{}
	seen := map[string]bool{}
	for _, r := range seeds {
		if counts[r.Scenario] == nil {
			counts[r.Scenario] = map[string]int{}
		}
		v := r.Verdict
		if !slices.Contains(verdictOrder, v) {
			v = "other"
		}
		counts[r.Scenario][v]++
		seen[v] = true
	}
	var keys []string
	for _, v := range append(slices.Clone(verdictOrder), "other") {
		if seen[v] {
			keys = append(keys, v)
		}
	}
	names := slices.Sorted(maps.Keys(counts))
	most := 0
	for _, n := range names {
		total := 0
		for _, c := range counts[n] {
			total += c
		}
		most = max(most, total)
	}
	bc := barChart{Width: chartWidth}
	for _, n := range names {
		row := barRow{Name: n, Label: shorten(n, labelRunes)}
		for _, k := range keys {
			row.ByKey = append(row.ByKey, counts[n][k])
			row.Total += counts[n][k]
		}
		bc.Numbers = append(bc.Numbers, row)
	}
	bc.layout(most, func(row *barRow, x0, scale float64) {
		x := x0
		for i, k := range keys {
			c := row.ByKey[i]
			if c == 0 {
				continue
			}
			w := float64(c) * scale
			row.Segs = append(row.Segs, barSeg{X: x, W: w, Class: "c-" + k, Title: fmt.Sprintf("%s: %d %s", row.Name, c, k)})
			x += w
		}
	})
	return bc, keys
}

// countChart draws one bar per name, the largest count first.
func countChart(m map[string]int, class func(string) string) barChart {
	names := slices.Sorted(maps.Keys(m))
	sort.SliceStable(names, func(i, j int) bool { return m[names[i]] > m[names[j]] })
	bc := barChart{Width: chartWidth}
	most := 0
	for _, n := range names {
		bc.Numbers = append(bc.Numbers, barRow{Name: n, Label: shorten(n, labelRunes), Total: m[n], Class: class(n)})
		most = max(most, m[n])
	}
	bc.layout(most, func(row *barRow, x0, scale float64) {
		if row.Total > 0 {
			row.Segs = []barSeg{{X: x0, W: float64(row.Total) * scale, Class: "c-bar", Title: fmt.Sprintf("%s: %d", row.Name, row.Total)}}
		}
	})
	return bc
}

// layout places the first maxBarLines rows; bars scale so the largest count
// fills the plot. draw adds a row's segments.
func (bc *barChart) layout(most int, draw func(row *barRow, x0, scale float64)) {
	plot := bc.Width - chartLabel - chartCount
	bc.PlotX, bc.PlotW = chartLabel, plot
	scale := 0.0
	if most > 0 {
		scale = plot / float64(most)
	}
	rows := bc.Numbers
	if len(rows) > maxBarLines {
		bc.Cut = len(rows) - maxBarLines
		rows = rows[:maxBarLines]
	}
	for i := range rows {
		row := rows[i] // a copy: the numbers keep no geometry
		row.Y = chartTop + float64(i)*chartRow
		row.TextY = row.Y + chartBar/2
		draw(&row, chartLabel, scale)
		row.CountX = chartLabel + float64(row.Total)*scale + 6
		bc.Rows = append(bc.Rows, row)
	}
	bc.Height = chartTop*2 + float64(len(bc.Rows))*chartRow
}

// wallChart is a histogram of seed wall times with p50, p90 and p99 marked.
func wallChart(seeds []SeedResult) histChart {
	hc := histChart{Width: chartWidth, Seeds: len(seeds), PlotTop: histTop, PlotBottom: histTop + histHeight}
	hc.Height = histTop + histHeight + histBottom
	walls := make([]float64, 0, len(seeds))
	for _, r := range seeds {
		if !math.IsNaN(r.WallSeconds) && !math.IsInf(r.WallSeconds, 0) && r.WallSeconds >= 0 {
			walls = append(walls, r.WallSeconds)
		}
	}
	if len(walls) == 0 {
		return hc
	}
	q := stats.Quantiles(walls, 0, 0.5, 0.9, 0.99, 1)
	mean := stats.Mean(walls)
	hc.Numbers = []Option{
		{"seeds", fmt.Sprint(len(walls))},
		{"fastest", secs(q[0])},
		{"p50", secs(q[1])},
		{"p90", secs(q[2])},
		{"p99", secs(q[3])},
		{"slowest", secs(q[4])},
		{"mean", secs(mean)},
		{"all seeds together", secs(mean * float64(len(walls)))},
	}
	top := q[4]
	if top <= 0 {
		top = 1
	}
	x0, plot := 40.0, chartWidth-40.0-16
	x := func(v float64) float64 { return x0 + v/top*plot }
	counts := make([]int, histBins)
	for _, w := range walls {
		counts[min(int(w/top*histBins), histBins-1)]++
	}
	most := slices.Max(counts)
	hc.Most = most
	binW := plot / histBins
	for i, c := range counts {
		if c == 0 {
			continue
		}
		h := float64(c) / float64(most) * histHeight
		lo, hi := top*float64(i)/histBins, top*float64(i+1)/histBins
		hc.Bars = append(hc.Bars, histBar{X: x0 + float64(i)*binW + 1, W: binW - 2, Y: hc.PlotBottom - h, H: h,
			Title: fmt.Sprintf("%d seeds took %s to %s", c, secs(lo), secs(hi))})
	}
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		hc.Ticks = append(hc.Ticks, histTick{X: x(v), Label: secs(v)})
	}
	// Each mark's label has a row of its own: close quantiles stay legible.
	for i, m := range []struct {
		name string
		v    float64
	}{{"p50", q[1]}, {"p90", q[2]}, {"p99", q[3]}} {
		anchor := "middle"
		if x(m.v) > chartWidth-60 {
			anchor = "end"
		}
		hc.Marks = append(hc.Marks, histMark{X: x(m.v), LabelY: 10 + float64(i)*11, Label: m.name + " " + secs(m.v),
			Anchor: anchor, Class: m.name})
	}
	return hc
}

// secs renders a duration in seconds for the charts: "0.42s", "12.3s".
func secs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2fs", v)
	}
	return fmt.Sprintf("%.1fs", v)
}
