package reports

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
)

// metricsMismatch is a counter compared with the ground truth at the end of
// a run, as the accounting checks report it: no job, no step.
func metricsMismatch(checkerName string) checker.Violation {
	return checker.Violation{Layer: checker.LayerInvariants, Checker: checkerName, Time: time.Hour,
		Message: "dispatch_rollbacks_total=0 but 1 dispatch publishes failed"}
}

func checkers(vs []checker.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Checker
	}
	return out
}

// The checker lists by layer, then step: a whole-run counter mismatch (step
// 0) comes first. A person reads the job-level findings first, safety before
// liveness, earliest step first; then the counters; then what the
// environment explains.
func TestReadingOrder(t *testing.T) {
	vs := []checker.Violation{
		metricsMismatch("metrics"),
		{Layer: checker.LayerInvariants, Checker: "exactly_once_publish", Job: "j-1", Step: 900},
		{Layer: checker.LayerInvariants, Checker: "no_resurrection", Job: "j-2", Step: 300},
		{Layer: checker.LayerInvariants, Checker: "dlq_entry", Job: "j-3"},  // a job, no step
		{Layer: checker.LayerInvariants, Checker: "sweep_count", Step: 450}, // a step, no job
		{Layer: checker.LayerLinearization, Checker: "job_lifecycle", Job: "j-4", Step: 600},
		{Layer: checker.LayerLiveness, Checker: "job_terminal", Job: "j-5", Step: 100},
		{Layer: checker.LayerEnvironment, Checker: "exactly_once_execution", Job: "j-6", Step: 5},
		metricsMismatch("admission_metrics"),
	}
	got := readingOrder(vs)
	require.Equal(t, []string{"no_resurrection", "sweep_count", "job_lifecycle", "exactly_once_publish", "dlq_entry",
		"job_terminal", "metrics", "admission_metrics", "exactly_once_execution"}, checkers(got))
	require.Equal(t, "metrics", vs[0].Checker, "the checker's slice is left as it was")

	// The summary's violations are in the same order, and its helpers agree.
	r := SeedResultOf(Run{Scenario: "s", Result: &checker.Result{Violations: vs, Linearizability: checker.LinOk}}, "")
	require.Equal(t, "no_resurrection", r.Violations[0].Checker)
	require.Equal(t, "metrics", r.Violations[6].Checker)
	require.True(t, r.Violations[6].Accounting())
	require.False(t, r.Violations[1].Accounting(), "a step without a job is not about the whole run")
	reversed := append([]Violation(nil), r.Violations...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	first, ok := FirstFinding(reversed)
	require.True(t, ok)
	require.Equal(t, "no_resurrection", first.Checker, "whatever order a summary was written in")
	require.Equal(t, "linearizability unknown", FirstChecker(SeedResult{Linearizability: "unknown"}))
}

// A real failing seed, with a metrics mismatch the checker listed first: the
// report opens on the job-level finding (its card, its trace, its zoomed
// swimlane), and the counter mismatch comes after, under its own heading.
func TestSeedReportOpensOnTheJobLevelFinding(t *testing.T) {
	o := failingRun(t)
	v := firstViolation(t, o)
	require.NotZero(t, v.Step)
	for _, tc := range []struct {
		name string
		vs   func() []checker.Violation
	}{
		{"metrics listed first", func() []checker.Violation {
			return append([]checker.Violation{metricsMismatch("metrics")}, o.Result.Violations...)
		}},
		{"metrics listed last", func() []checker.Violation {
			return append(append([]checker.Violation(nil), o.Result.Violations...), metricsMismatch("metrics"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := *o.Result
			res.Violations = tc.vs()
			cp := *o
			cp.Result = &res
			r := NewSeedReport(runOf(&cp), "", Meta{})
			first := r.view.Violations[0]
			require.Equal(t, v.Checker, first.Checker)
			require.Equal(t, v.Job, first.Job)
			require.Equal(t, v.Step, r.view.Trace.Step, "the trace opens at the job-level finding's step")
			require.False(t, r.view.Trace.AtEnd)
			require.Equal(t, "lane-1", r.view.Timeline.Anchors[v.Job], "its job's swimlane is the first zoomed")
			require.Equal(t, "lane-1", first.LaneID)
			require.NotEmpty(t, first.TraceID)
			last := r.view.Violations[len(r.view.Violations)-1]
			require.Equal(t, "metrics", last.Checker)
			require.True(t, last.Accounting && last.FirstAccounting)

			html := renderSeed(t, r)
			cards := strings.Split(html, `<li class="violation `)[1:]
			require.Contains(t, cards[0], v.Checker)
			require.NotContains(t, cards[0], "metrics")
			sep := strings.Index(html, "Counters and metrics over the whole run")
			require.Greater(t, sep, strings.Index(html, `<li class="violation `), "the counters come after the job's finding")
			require.Contains(t, html, "the whole run, at its end")
		})
	}
}

// Failing seeds group under their first job-level checker, not under the
// counter mismatch every seed of a broken run shares.
func TestFailureGroupsKeyOnTheFirstJobLevelChecker(t *testing.T) {
	withMetrics := func(n uint64, job string) SeedResult {
		r := seed("s", n, VerdictSafety)
		r.Violations = []Violation{
			{Layer: "invariants", Checker: "metrics", Message: "dispatch_rollbacks_total=0"}, // as an older summary lists it
			{Layer: "liveness", Checker: "job_terminal", Job: "j-9", Step: 3},
			{Layer: "invariants", Checker: job, Job: "j-1", Step: 40, Message: "job j-1 went wrong"},
		}
		return r
	}
	onlyMetrics := seed("s", 5, VerdictSafety)
	onlyMetrics.Violations = []Violation{{Layer: "invariants", Checker: "metrics"}}
	undecided := seed("s", 6, VerdictInconclusive)
	undecided.Linearizability = "unknown"
	s := Build("t", "release", "", []CaseSpec{{Scenario: "s", Seeds: []uint64{1, 2, 3, 4, 5, 6}}},
		[]SeedResult{withMetrics(1, "exactly_once_publish"), withMetrics(2, "exactly_once_publish"),
			withMetrics(3, "exactly_once_publish"), withMetrics(4, "no_resurrection"), onlyMetrics, undecided}, 1)
	var keys []string
	for _, g := range s.Groups {
		keys = append(keys, g.Checker)
	}
	require.Equal(t, []string{"exactly_once_publish", "no_resurrection", "metrics", "linearizability unknown"}, keys)
	require.Equal(t, 3, s.Groups[0].Count)
	require.Equal(t, uint64(1), s.Groups[0].FirstSeed)

	// JUnit's message is the same first finding, and its body lists them
	// in reading order.
	var buf bytes.Buffer
	require.NoError(t, WriteJUnit(&buf, s))
	var back junitSuite
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, "s/1", back.Cases[0].Name)
	require.Equal(t, "invariants/exactly_once_publish: job j-1 went wrong", back.Cases[0].Failure.Message)
	body := back.Cases[0].Failure.Body
	require.Less(t, strings.Index(body, "exactly_once_publish"), strings.Index(body, "job_terminal"))
	require.Less(t, strings.Index(body, "job_terminal"), strings.Index(body, "metrics"))
}

// A merged summary keeps the system its shards ran, and shards of two
// systems do not merge.
func TestMergeKeepsTheSystem(t *testing.T) {
	cases := []CaseSpec{{Scenario: "s", Seeds: []uint64{1, 2}}}
	part := func(shard string, n uint64, system string) *Summary {
		p := Build("t", "release", shard, cases, []SeedResult{seed("s", n, VerdictPass)}, 1)
		p.System = system
		return p
	}
	m, err := Merge([]*Summary{part("1/2", 1, "outbox"), part("2/2", 2, "outbox")})
	require.NoError(t, err)
	require.Equal(t, "outbox", m.System)
	_, err = Merge([]*Summary{part("1/2", 1, "outbox"), part("2/2", 2, "cordum")})
	require.ErrorContains(t, err, `ran system "cordum"`)
}

// A seed whose only findings are counter mismatches has no step to open the
// trace at: it opens at the first fault (what they count began there), not
// at the heartbeats that end every run; the cards link nowhere in the trace.
func TestSeedReportOfCounterMismatchesOpensAtTheFirstFault(t *testing.T) {
	o := failingRun(t)
	require.NotEmpty(t, o.Run.History.Faults)
	res := *o.Result
	res.Violations = []checker.Violation{metricsMismatch("metrics"), metricsMismatch("metrics")}
	cp := *o
	cp.Result = &res
	r := NewSeedReport(runOf(&cp), "", Meta{})
	require.True(t, r.view.Trace.AtFault)
	require.False(t, r.view.Trace.AtEnd)
	require.Equal(t, o.Run.History.Faults[0].Step, r.view.Trace.Step)
	require.Empty(t, r.view.Trace.Excerpts)
	for _, v := range r.view.Violations {
		require.True(t, v.Accounting)
		require.Empty(t, v.TraceID)
		require.Empty(t, v.LaneID)
	}
	html := renderSeed(t, r)
	require.Contains(t, html, "the first fault (no finding names a step)")
	require.NotContains(t, html, `class="to-trace"`)
}
