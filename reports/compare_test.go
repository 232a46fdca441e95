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
	require.Contains(t, html.String(), "TIMEOUT never published")
	require.Contains(t, c.Text(), "duplicate executions")
}
