package reports

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
)

func renderSeed(t *testing.T, r *SeedReport) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, r.WriteHTML(&buf))
	return buf.String()
}

func TestSeedReportFromRealFailure(t *testing.T) {
	o := failingRun(t)
	v := firstViolation(t, o)
	plan := o.Plan
	html := renderSeed(t, NewSeedReport(runOf(o), "exactly_once_publish", Meta{EngineVersion: "test",
		Options: []Option{{"replicas", "3"}, {"bus.dedup", "false"}}, Shrink: "simrun shrink --scenario x --seed 1",
		Plan: &plan}))

	for _, id := range []string{"summary", "violations", "plan", "timeline", "linearizability", "trace", "replay"} {
		require.Contains(t, html, `id="`+id+`"`, "element id %s", id)
	}
	require.Contains(t, html, `class="lane hot"`)
	require.GreaterOrEqual(t, strings.Count(html, `class="lane`), 2)
	require.Contains(t, html, `class="violation `)
	require.Contains(t, html, "job "+v.Job+" published twice")
	require.Contains(t, html, "PublishFailsAfterStored at step")
	require.Contains(t, html, "simrun replay --system cordum --scenario "+dupScenario)
	require.Contains(t, html, "simrun shrink --scenario x --seed 1")
	require.Contains(t, html, "Minimal fault plan")
	require.Contains(t, html, `<iframe class="porcupine"`, "porcupine's view of the violating job")
	require.Contains(t, html, `class="tl-line hit"`, "the violating trace line is highlighted")
	require.Less(t, len(html), maxReportBytes)
	require.Contains(t, html, "whenLaidOut(function () { render(data); fitView(", "porcupine draws once laid out, then fits")
	require.Equal(t, VerdictExpected, SeedResultOf(runOf(o), "exactly_once_publish").Verdict,
		"the scenario's duplicate (and its duplicate execution) is what it exists to find")
	// Self-contained: nothing is fetched from the network.
	for _, ref := range []string{`src="http`, `href="http`, "@import", "url(http"} {
		require.NotContains(t, html, ref)
	}
	t.Logf("report: %d bytes", len(html))
}

func TestSeedReportEscapesWorkloadValues(t *testing.T) {
	o := failingRun(t)
	v := firstViolation(t, o)
	const payload = "<script>alert(1)</script>"
	const target = `<img src=x onerror="document.body.dataset.pwned=1">`
	p := poisoned(o, v.Job, payload, target)
	html := renderSeed(t, NewSeedReport(runOf(p), "exactly_once_publish", Meta{Note: payload, Options: []Option{{payload, target}}}))

	require.NotContains(t, html, payload)
	require.NotContains(t, html, "<img src=x")
	require.NotContains(t, strings.ToLower(html), "alert(1)</script>")
	require.Contains(t, html, "&lt;script&gt;alert(1)&lt;/script&gt;", "the payload is shown, escaped")
	require.Contains(t, html, "job &lt;script&gt;alert(1)&lt;/script&gt; published twice")
	// The original outcome is untouched.
	require.Equal(t, v.Job, firstViolation(t, o).Job)
}

func TestSeedReportWithoutTrace(t *testing.T) {
	o := failingRun(t)
	cp := *o
	cp.World = nil
	html := renderSeed(t, NewSeedReport(runOf(&cp), "", Meta{}))
	require.Contains(t, html, "did not keep its trace")
	require.Contains(t, html, `id="trace"`)
	require.Contains(t, html, "safety violation", "without the expectation the duplicate is a safety failure")
}

func TestTraceExcerpt(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		b.WriteString("step=")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" t=0.000s actor=a run\n")
	}
	tv := buildTrace([]byte(b.String()), 500, map[uint64]bool{500: true})
	require.True(t, tv.Kept)
	require.Equal(t, 1000, tv.Total)
	require.Equal(t, 350, tv.From)
	require.Equal(t, 650, tv.To)
	require.Len(t, tv.Lines, 301)
	require.Equal(t, "hit", tv.Lines[150].Class)
	require.Equal(t, "500", tv.Lines[150].Step)
	require.Equal(t, "L500", tv.Anchor)

	end := buildTrace([]byte(b.String()), 0, nil)
	require.True(t, end.AtEnd)
	require.Equal(t, 1000, end.To)
}

func TestFaultIndex(t *testing.T) {
	h := &sim.History{
		Faults: []sim.FaultRecord{
			{Step: 1, Target: "hset job:j-10"},                                        // names j-10, not j-1
			{Step: 2, Target: "worker.w1.jobs", Point: sim.PointPublish, Actor: "r1"}, // the plan names the job
			{Step: 3, Target: "sys.job.submit", Point: sim.PointPublish, Actor: "c"},  // the publish names the job
		},
		Publishes: []sim.PublishRecord{{Step: 3, Actor: "c", JobID: "j-1"}},
	}
	plan := faults.Plan{Entries: []faults.PlanEntry{{Step: 2, Target: "worker.w1.jobs j-1"}}}
	fx := newFaultIndex(h, plan)
	require.Equal(t, []int{1, 2}, fx.of("j-1"))
	require.Equal(t, []int{0}, fx.of("j-10"))
	require.Empty(t, fx.of(""))
	require.Equal(t, "worker.w1.jobs j-1", fx.target(1))
	require.Equal(t, "sys.job.submit", fx.target(2))
}

func TestNaturalOrder(t *testing.T) {
	require.True(t, naturalLess("j-2", "j-10"))
	require.False(t, naturalLess("j-10", "j-2"))
	require.True(t, naturalLess("a", "b"))
}

func TestSeedReportShowsIllegalPartitions(t *testing.T) {
	o := failingRun(t)
	res := *o.Result
	res.Partitions = append([]checker.Partition(nil), res.Partitions...)
	res.Partitions[0].Outcome = checker.LinIllegal // as if the checker had found no linearization
	res.Linearizability = checker.LinIllegal
	cp := *o
	cp.Result = &res
	html := renderSeed(t, NewSeedReport(runOf(&cp), "", Meta{}))
	key := res.Partitions[0].Key
	require.Contains(t, html, `title="porcupine view of `+key+`"`)
	require.Contains(t, html, "porcupine's view of the illegal partition")
	require.NotContains(t, html, "Every partition is linearizable")
	require.Equal(t, 1, strings.Count(html, `<iframe class="porcupine"`))
}
