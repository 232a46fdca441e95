package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
)

// failedPublishes has one job per delay whose dispatch publish failed; each
// handler NAKs with its delay.
func failedPublishes(delays ...time.Duration) *story {
	s := newStory()
	for i, d := range delays {
		job := string(rune('a'+i)) + "1"
		actor := "replica-1/sys.job.submit#" + job
		s.submit(job).commit(job, engine.StatePending).commit(job, engine.StateScheduled).commit(job, engine.StateDispatched).
			publish(job, 0, history.PublishFailedClean)
		s.h.Publishes[len(s.h.Publishes)-1].Actor = actor
		s.commit(job, engine.StateScheduled)
		s.h.Settles = append(s.h.Settles, history.Settle{Step: s.tick(), Time: s.at(), Actor: actor, JobID: job,
			Outcome: history.SettleNak, Delay: d})
	}
	return s
}

func TestBackoffAgainstItsRule(t *testing.T) {
	ms := time.Millisecond
	require.Empty(t, only(failedPublishes(2*time.Second+17*ms, 4*time.Second+401*ms, time.Second+3).check(), "backoff"))
	require.Empty(t, only(failedPublishes(30*time.Second, 30*time.Second, 30*time.Second).check(), "backoff"),
		"at the cap the jitter is cut off")
	require.Empty(t, only(failedPublishes(2*time.Second, 4*time.Second+9*ms).check(), "backoff"),
		"a whole second is a fair draw now and then")

	v := only(failedPublishes(2*time.Second+700*ms).check(), "backoff")
	require.Len(t, v, 1, "700ms is past the jitter's bound")
	require.Contains(t, v[0].Message, "asked for a retry after 2.7s")

	v = only(failedPublishes(2*time.Second, 4*time.Second, time.Second).check(), "backoff")
	require.Len(t, v, 1, "no jitter at all")
	require.Contains(t, v[0].Message, "all 3 retries after a failed publish came back after a whole 1s<<n")
}
