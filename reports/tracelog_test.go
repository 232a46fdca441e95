package reports

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// syntheticTrace is 1000 steps of noise with j-1's events at steps 100
// (commit), 300 (a fault on a subject that does not name it), 500 (the
// violation's commit), and j-10's commit at 400, which must not count as j-1's.
func syntheticTrace() []byte {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "step=%d t=0.000s actor=a run\n", i)
		switch i {
		case 100:
			fmt.Fprintf(&b, "step=%d t=0.000s actor=r1 state j-1 <none> -> PENDING v1\n", i)
		case 300:
			fmt.Fprintf(&b, "step=%d t=0.000s actor=r1 fault AckLost (ack_lost) at ack sys.job.result\n", i)
		case 400:
			fmt.Fprintf(&b, "step=%d t=0.000s actor=r1 state j-10 <none> -> PENDING v1\n", i)
		case 500:
			fmt.Fprintf(&b, "step=%d t=0.000s actor=r1 state j-1 SUCCEEDED -> RETRYING v6\n", i)
		}
	}
	return []byte(b.String())
}

func TestExcerptShowsTheJobsEventsNearItsStep(t *testing.T) {
	trace := syntheticTrace()
	wants := []excerptWant{
		{Job: "j-1", Checker: "no_resurrection", Step: 500, FaultSteps: []uint64{300}},
		{Job: "j-1", Checker: "transition_graph", Step: 500},
		{Job: "j-10", Checker: "job_lifecycle", Step: 400},
	}
	exs, ids, cut := buildExcerpts(trace, wants, map[uint64]bool{500: true, 400: true})
	require.Zero(t, cut)
	require.Len(t, exs, 2, "violations on one job at one step share an excerpt")
	require.Equal(t, []string{"trace-v1", "trace-v1", "trace-v2"}, ids)
	require.Equal(t, []string{"no_resurrection", "transition_graph"}, exs[0].Checkers)

	text := map[string]string{}
	for _, l := range exs[0].Lines {
		text[l.Step+" "+l.Class] += l.Text + "\n"
	}
	require.Contains(t, text["100 commit"], "state j-1 <none> -> PENDING", "the job's earlier commit")
	require.Contains(t, text["300 fault"], "AckLost", "a fault about the job, though its line names a subject")
	require.Contains(t, text["500 hit"], "SUCCEEDED -> RETRYING", "the violating line")
	for _, l := range exs[0].Lines {
		require.NotContains(t, l.Text, "j-10", "j-10 is not j-1")
	}
	// Lines between the picks are left out and counted.
	total := 0
	for _, l := range exs[0].Lines {
		total += 1 + l.Gap
	}
	require.Equal(t, 1000+4, total+exs[0].After, "every line is shown or counted once")
	require.Less(t, len(exs[0].Lines), 30)
}

func TestExcerptsAreCapped(t *testing.T) {
	trace := syntheticTrace()
	var wants []excerptWant
	for i := range maxExcerpts + 5 {
		wants = append(wants, excerptWant{Job: "j-1", Step: uint64(i + 1)})
	}
	exs, ids, cut := buildExcerpts(trace, wants, nil)
	require.Len(t, exs, maxExcerpts)
	require.Equal(t, 5, cut)
	require.Empty(t, ids[len(ids)-1])

	none, ids, _ := buildExcerpts(nil, wants[:2], nil)
	require.Empty(t, none)
	require.Equal(t, []string{"", ""}, ids, "no trace kept, no excerpt")
}

// Every violation card of a real failing run links to its excerpt and its
// job's swimlane, and both ids exist on the page.
func TestEveryViolationLinksResolve(t *testing.T) {
	o := failingRun(t)
	html := renderSeed(t, NewSeedReport(runOf(o), "exactly_once_publish", Meta{}))
	cards := strings.Split(html, `<li class="violation `)[1:]
	require.Len(t, cards, min(len(o.Result.Violations), maxViolations))
	for _, card := range cards {
		for _, class := range []string{"to-trace", "to-lane"} {
			m := regexp.MustCompile(`class="` + class + `" href="#([^"]+)"`).FindStringSubmatch(card)
			require.NotNil(t, m, "a %s link in %s", class, card)
			require.Contains(t, html, `id="`+m[1]+`"`)
		}
	}
}
