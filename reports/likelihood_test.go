package reports

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sampleLikelihood is a curve that rises at a fault and is certain from the
// step after it; an event key carries markup, which must stay text.
func sampleLikelihood() *Likelihood {
	fault := LikelihoodEvent{Step: 420, Time: 29 * time.Second, Key: "fault PublishFailsAfterStored at publish in -"}
	return &Likelihood{Scenario: "s", Seed: 13, Checker: "exactly_once_publish", ViolationStep: 512, Steps: 10000,
		Branches: 4,
		Moments: []LikelihoodMoment{
			{Step: 0, Runs: 4, Failing: 1, PassReplay: "simrun replay --scenario s --seed 13 --branch 0/2"},
			{Step: 419, Runs: 4, Failing: 0, Refined: true},
			{Step: 420, Runs: 4, Failing: 3, Refined: true},
			{Step: 423, Runs: 4, Failing: 4, Refined: true,
				FailReplay: "simrun replay --scenario s --seed 13 --branch 423/1"},
			{Step: 512, Runs: 4, Failing: 4}},
		Certain: true, CertainStep: 423, FaultBefore: &fault,
		EventBefore:     &LikelihoodEvent{Step: 423, Key: "transition DISPATCHED->SCHEDULED"},
		Faults:          []LikelihoodEvent{{Step: 100, Key: "fault <b>x</b>"}, fault, {Step: 900, Key: "fault after"}},
		Overrepresented: []EventOdds{{Key: "transition DISPATCHED->SCHEDULED", Failing: 6, Passing: 2, Ratio: 4.1}},
		ComparedFailing: 6, ComparedPassing: 10}
}

func TestLikelihoodPanel(t *testing.T) {
	o := failingRun(t)
	html := renderSeed(t, NewSeedReport(runOf(o), "", Meta{Likelihood: sampleLikelihood()}))
	for _, want := range []string{`id="likelihood"`, `href="#likelihood"`,
		"Certain from step 423: every branch from there on fails exactly_once_publish.",
		"The fault just before it: step <b>420</b> (29s)", "transition DISPATCHED-&gt;SCHEDULED",
		`class="surezone"`, `class="fmark key"`, `id="likelihood-odds"`, "4.1×",
		"simrun replay --scenario s --seed 13 --branch 423/1", "fault &lt;b&gt;x&lt;/b&gt;"} {
		require.Contains(t, html, want)
	}
	require.NotContains(t, html, "fault <b>x</b>")
	require.Equal(t, 5, strings.Count(html, `<circle class="pt`), "one point per moment")
	require.Equal(t, 2, strings.Count(html, `<polygon class="fmark`), "faults after the last moment are off the axis")

	l := sampleLikelihood()
	l.Job = "j-9"
	l.Faults[0].Job = "j-9"
	l.JobFaultBefore = &l.Faults[0]
	html = renderSeed(t, NewSeedReport(runOf(o), "", Meta{Likelihood: l}))
	require.True(t, strings.Contains(html, "The last fault on <b>j-9</b>, the violation's job, before it: step <b>100</b>"),
		"the last fault on the violation's job is named")
	require.Contains(t, html, `class="fmark jobkey"`)

	without := renderSeed(t, NewSeedReport(runOf(o), "", Meta{Explain: "simrun likelihood --scenario s --seed 13"}))
	require.NotContains(t, without, `id="likelihood"`, "no panel unless simrun likelihood ran")
	require.Contains(t, without, `<code id="likelihood-line">simrun likelihood --scenario s --seed 13</code>`,
		"but the line that runs it")
	with := renderSeed(t, NewSeedReport(runOf(o), "", Meta{Explain: "simrun likelihood --scenario s --seed 13",
		Likelihood: sampleLikelihood()}))
	require.NotContains(t, with, `id="likelihood-line"`, "with the panel there, no line to run it again")
}

// The curve's geometry: step 0 at the plot's left edge, the last moment at
// its right, a share of 1 at its top; the certain zone starts at its step.
func TestLikelihoodLayout(t *testing.T) {
	v := buildLikelihood(sampleLikelihood())
	require.Equal(t, v.PlotLeft, v.Points[0].X)
	require.Equal(t, v.PlotRight, v.Points[len(v.Points)-1].X)
	require.Equal(t, v.PlotTop, v.Points[len(v.Points)-1].Y)
	require.Equal(t, v.PlotBottom, v.Points[1].Y)
	require.InDelta(t, v.PlotLeft+(v.PlotRight-v.PlotLeft)*423/512, v.CertainX, 1e-9)
	require.Contains(t, v.Points[3].Class, "sure")
	require.NotContains(t, v.Points[2].Class, "sure")
	require.False(t, v.FromStart)

	l := sampleLikelihood()
	l.Moments[0].Failing = 4
	l.CertainStep = 0
	require.True(t, buildLikelihood(l).FromStart)
	require.Contains(t, buildLikelihood(l).Headline, "Certain from the start")

	l.Certain = false
	l.NotRun = 3
	require.Contains(t, buildLikelihood(l).Headline, "3 branches did not run")
}

func TestLikelihoodPanelInBrowser(t *testing.T) {
	bin := chromium(t)
	file := filepath.Join(t.TempDir(), "report.html")
	require.NoError(t, WriteFileAtomic(file, NewSeedReport(runOf(failingRun(t)), "",
		Meta{Likelihood: sampleLikelihood()}).WriteHTML))
	dom := headless(t, bin, file, "--dump-dom")
	require.Contains(t, dom, `id="likelihood-headline"`)
	require.Contains(t, dom, `<polyline class="curve"`)
}
