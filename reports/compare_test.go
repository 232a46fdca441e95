package reports

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// A job executed twice, one that timed out never published, latencies from
// submit to first execution: each lands in its row.
func TestCompareCountsDuplicatesBlindJobsAndLatency(t *testing.T) {
	spec := sut.Spec{Dispatched: "DISPATCHED", TimedOut: "TIMEOUT"}
	h := &history.History{
		Submitted: []history.SubmittedJob{{JobID: "a", At: 0}, {JobID: "b", At: time.Second}},
		Executions: []history.Execution{{JobID: "a", Time: 2 * time.Second}, {JobID: "a", Time: 9 * time.Second},
			{JobID: "b", Time: 5 * time.Second}},
		States: []history.StateChange{{JobID: "c", To: "DISPATCHED", Time: 10 * time.Second},
			{JobID: "c", From: "DISPATCHED", To: "TIMEOUT", Time: 310 * time.Second}},
		Redis: history.RedisStats{Commands: 30, Scripts: 6},
	}
	f := CompareSystem("x", spec, []Run{{History: h}}, time.Second)
	require.Equal(t, 1, f.DuplicateExecutions)
	require.Equal(t, 1, f.BlindJobs)
	require.InDelta(t, 300, f.BlindWindowMaxSeconds, 1e-9)
	require.InDelta(t, 15, f.CommandsPerJob, 1e-9)
	require.InDelta(t, 3, f.LatencyP50Seconds, 1, "latencies 2s and 4s")
	c := NewComparison("s", 1, []SystemFacts{f})
	var html bytes.Buffer
	require.NoError(t, c.WriteHTML(&html))
	require.Contains(t, html.String(), "timed out, dispatch never stored")
	require.Contains(t, c.Text(), "duplicate executions")
}

// judged is a system's column judged from its seeds over one case that
// declares kinds K1 and K2 and the branch b1.
func judged(system string, seeds ...SeedResult) SystemFacts {
	cases := []CaseSpec{{Scenario: "s", Seeds: []uint64{1, 2}, Declared: []string{"K1", "K2"}, Sometimes: []string{"b1"}}}
	sum := Build("t", "s", "", cases, seeds, 1)
	sum.System = system
	f := SumSeeds(system, nil, time.Second)
	f.Judge(sum)
	return f
}

// Two systems with different verdicts never look alike: the verdict row, the
// header and the exit code (the worst system's) say which failed.
func TestCompareVerdictsAndExitCode(t *testing.T) {
	reached := func(r SeedResult) SeedResult { r.Branches = map[string]int{"b1": 1}; return r }
	good := judged("alpha", reached(seed("s", 1, VerdictPass, "K1")), seed("s", 2, VerdictPass, "K2"))
	require.Equal(t, VerdictPass, good.Verdict)
	require.Equal(t, 0, good.ExitCode)
	require.Equal(t, [4]int{2, 2, 1, 1}, [4]int{good.KindsFired, good.KindsDeclared, good.SometimesReached, good.SometimesDeclared})

	bad := judged("beta", seed("s", 1, VerdictSafety, "K1"), seed("s", 2, VerdictPass))
	require.Equal(t, VerdictSafety, bad.Verdict)
	require.Equal(t, 1, bad.FailingSeeds)
	require.Equal(t, [4]int{1, 2, 0, 1}, [4]int{bad.KindsFired, bad.KindsDeclared, bad.SometimesReached, bad.SometimesDeclared})
	require.Equal(t, []string{"K2", "sometimes b1 never reached"}, bad.NeverFired)

	slow := judged("gamma", reached(seed("s", 1, VerdictLiveness, "K1", "K2")), seed("s", 2, VerdictPass))
	require.Equal(t, VerdictLiveness, slow.Verdict)

	for _, tc := range []struct {
		cols []SystemFacts
		code int
	}{
		{[]SystemFacts{good, good}, 0},
		{[]SystemFacts{good, bad}, 1},
		{[]SystemFacts{bad, good}, 1},
		{[]SystemFacts{good, slow}, 3},
		{[]SystemFacts{slow, bad}, 1},
	} {
		c := NewComparison("s", 2, tc.cols)
		require.Equal(t, tc.code, c.ExitCode(), c.Names())
	}

	c := NewComparison("s", 2, []SystemFacts{good, bad})
	require.Equal(t, "alpha vs beta", c.Names())
	text := c.Text()
	require.Contains(t, text, "alpha vs beta: suite s")
	require.Regexp(t, `verdict +pass \(exit 0\) +safety \(exit 1\)`, text)
	require.Regexp(t, `fault kinds fired +2 of 2 declared +1 of 2 declared`, text)
	require.Regexp(t, `sometimes-branches reached +1 of 1 declared +0 of 1 declared`, text)
	require.Contains(t, text, "The verdicts differ: alpha pass and beta safety violation")

	var html bytes.Buffer
	require.NoError(t, c.WriteHTML(&html))
	page := html.String()
	require.Contains(t, page, "<title>alpha vs beta · s")
	require.Contains(t, page, "<h1>alpha vs beta</h1>")
	require.Regexp(t, `<tr class="verdicts differ">.*<span class="pill v-pass">pass \(exit 0\)</span>.*<span class="pill v-safety">safety \(exit 1\)</span>`, page)
	require.Contains(t, page, `id="differ">the verdicts differ`)
	require.Contains(t, page, "fault kinds fired</span><span class=\"why\">", "each row says what it counts")

	same := NewComparison("s", 2, []SystemFacts{good, judged("delta", reached(seed("s", 1, VerdictPass, "K1")), seed("s", 2, VerdictPass, "K2"))})
	require.NotContains(t, same.Text(), "differ")
	html.Reset()
	require.NoError(t, same.WriteHTML(&html))
	require.NotContains(t, html.String(), `id="differ"`)
	require.Contains(t, html.String(), `<tr class="verdicts">`)
}
