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

// The rule's edges: the jitter stays below its bound; a publish that failed
// after the broker stored it asks for the backoff too; a handler that acked
// instead of asking, or the same actor's settle of an earlier delivery, is
// no retry of this publish; retries at the cap are not counted among the
// whole-second ones; and a system without jitter, or without a cap, makes
// no such promise.
func TestBackoffRuleAtItsEdges(t *testing.T) {
	ms := time.Millisecond
	require.Len(t, only(failedPublishes(2*time.Second+500*ms).check(), "backoff"), 1, "the jitter's bound itself is past it")

	stored := failedPublishes(2*time.Second + 700*ms)
	stored.h.Publishes[0].Outcome = history.PublishFailedStored
	require.Len(t, only(stored.check(), "backoff"), 1, "a failed publish the broker stored")

	acked := failedPublishes(2*time.Second + 700*ms)
	acked.h.Settles[0].Outcome = history.SettleAck
	require.Empty(t, only(acked.check(), "backoff"), "an ack asks for no retry")

	earlier := failedPublishes(2*time.Second + 700*ms)
	earlier.h.Settles = append([]history.Settle{{Step: 1, Actor: earlier.h.Publishes[0].Actor, JobID: "a1",
		Outcome: history.SettleAck}}, earlier.h.Settles...)
	require.Len(t, only(earlier.check(), "backoff"), 1, "the actor's settle of an earlier delivery is not this retry")

	withCapped := failedPublishes(2*time.Second, 4*time.Second, time.Second, 30*time.Second)
	require.Len(t, only(withCapped.check(), "backoff"), 1, "three whole retries below the cap, whatever sat at the cap")

	noJitter := cordumSpec
	noJitter.BackoffJitter = 0
	require.Empty(t, only(failedPublishes(2*time.Second, 4*time.Second, time.Second).checkSystem(noJitter), "backoff"))
	noCap := cordumSpec
	noCap.BackoffMax = 0
	require.Empty(t, only(failedPublishes(2*time.Second+700*ms).checkSystem(noCap), "backoff"))
}
