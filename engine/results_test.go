package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// dispatch runs a job to RUNNING and returns its dispatch generation.
func (te *testEngine) dispatch(t *testing.T, id string) {
	t.Helper()
	require.NoError(t, te.HandleJobRequest(ctx, req(id)))
	require.Equal(t, StateRunning, te.state(t, id))
}

// Seed 004 (the arc resurrection): a retryable failure reported after success,
// during teardown, never moves the job out of SUCCEEDED, and nothing re-dispatches it.
func TestRetryableFailureAfterSuccessDoesNotResurrect(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.dispatch(t, "j1")
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded, ResultPtr: "s3://r/1"}))
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultFailedRetryable, Error: "rate limited in teardown"}))

		j := te.job(t, "j1")
		require.Equal(t, StateSucceeded, j.State)
		require.Equal(t, "s3://r/1", j.ResultPtr)
		require.Equal(t, 1.0, te.counter(te.metrics.resultIgnored.WithLabelValues("terminal")))

		te.env.clock.Advance(DefaultReplayAfter * 2)
		require.NoError(t, te.ReplayPendingOnce(ctx))
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."), "dispatched once")
	})
}

// The same guard holds at the store, whatever the caller: a requeue of a
// terminal job is refused and changes nothing.
func TestStoreRefusesRequeueOfTerminalJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j1", StateSucceeded)
		before := te.job(t, "j1")
		for _, to := range []JobState{StatePending, StateScheduled, StateRetrying, StateFailed} {
			_, err := te.store.Transition(ctx, Transition{JobID: "j1", From: StateSucceeded, To: to})
			var te2 *TransitionError
			require.ErrorAs(t, err, &te2, "to %s", to)
			require.Equal(t, RefusedTerminal, te2.Reason)
		}
		require.Equal(t, before, te.job(t, "j1"))
	})
}

// No result of any status moves a job out of a terminal state or sends it
// out again: neither the handler's check nor, without it, the store's table
// lets it through.
func TestResultOnTerminalJobChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.dispatch(t, "j1")
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded, ResultPtr: "s3://r/1"}))
		before := te.job(t, "j1")
		for _, status := range []string{ResultFailedRetryable, ResultFailed, ResultFailedFatal, ResultSucceeded, "LOST"} {
			require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: status, ResultPtr: "s3://r/late"}), status)
			require.Equal(t, before, te.job(t, "j1"), status)
		}
		_, err := te.store.DLQEntry(ctx, "j1")
		require.ErrorIs(t, err, ErrJobNotFound)
		te.env.clock.Advance(2 * DefaultReplayAfter)
		require.NoError(t, te.ReplayPendingOnce(ctx))
		require.Equal(t, 1, te.bus.count("worker."), "dispatched once")
	})
}

// Cordum regression: a FAILED result on a SUCCEEDED job is ignored.
func TestTerminalRegressionBlocked(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.dispatch(t, "j1")
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded}))
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultFailed}))
		require.Equal(t, StateSucceeded, te.state(t, "j1"))
		_, err := te.store.DLQEntry(ctx, "j1")
		require.ErrorIs(t, err, ErrJobNotFound, "no DLQ entry for an ignored failure")
	})
}

func TestResultStatusMapping(t *testing.T) {
	cases := []struct {
		status string
		want   JobState
		dlq    ReasonCode
	}{
		{ResultSucceeded, StateSucceeded, ""},
		{ResultCompleted, StateSucceeded, ""},
		{ResultFailed, StateFailed, ReasonJobFailed},
		{ResultFailedFatal, StateFailed, ReasonJobFailed},
		{ResultFailedRetryable, StateRetrying, ""},
		{"WEIRD", StateFailed, ReasonUnknownResult},
	}
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		for _, c := range cases {
			id := "job-" + c.status
			te.dispatch(t, id)
			require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: id, Status: c.status}))
			require.Equal(t, c.want, te.state(t, id), c.status)
			entry, err := te.store.DLQEntry(ctx, id)
			if c.dlq == "" {
				require.ErrorIs(t, err, ErrJobNotFound)
				continue
			}
			require.NoError(t, err)
			require.Equal(t, c.dlq, entry.ReasonCode)
			require.Equal(t, StateRunning, entry.LastState)
		}
	})
}

// A retryable failure earns one re-dispatch, under a new message id; a late
// result of the earlier dispatch is ignored.
func TestRetryingRedispatchesUnderNewMessageID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.dispatch(t, "j1")
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultFailedRetryable}))
		require.Equal(t, StateRetrying, te.state(t, "j1"))

		te.env.clock.Advance(DefaultReplayAfter)
		te.heartbeat("w1", "general", 0) // still alive
		require.NoError(t, te.ReplayPendingOnce(ctx))
		require.Equal(t, StateRunning, te.state(t, "j1"))
		require.Equal(t, 2, te.bus.count("worker."))
		require.Equal(t, "jobreq:j1", te.bus.published[0].Msg.ID)
		require.Equal(t, "jobreq:j1:1", te.bus.published[1].Msg.ID)

		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultFailed, DispatchGen: 0}))
		require.Equal(t, StateRunning, te.state(t, "j1"), "stale generation ignored")
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded, DispatchGen: 1}))
		require.Equal(t, StateSucceeded, te.state(t, "j1"))
	})
}

// An ambiguous publish (stored by the broker, error returned) is rolled back to
// SCHEDULED, yet the worker runs the job: its result is accepted, and the pending
// redelivery then finds the job terminal.
func TestResultAfterAmbiguousPublishIsAccepted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.stored = true
		te.bus.failNext("worker.", 1)
		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		require.Equal(t, StateScheduled, te.state(t, "j1"))

		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded}))
		require.Equal(t, StateSucceeded, te.state(t, "j1"))
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
	})
}

func TestCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)

		require.NoError(t, te.HandleCancel(ctx, CancelRequest{JobID: "early"}))
		require.NoError(t, te.HandleJobRequest(ctx, req("early")))
		require.Equal(t, StateCancelled, te.state(t, "early"), "cancel before submit wins")

		te.dispatch(t, "running")
		require.NoError(t, te.HandleCancel(ctx, CancelRequest{JobID: "running"}))
		require.Equal(t, StateCancelled, te.state(t, "running"))
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "running", Status: ResultSucceeded}))
		require.Equal(t, StateCancelled, te.state(t, "running"), "late result ignored")

		te.dispatch(t, "done")
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "done", Status: ResultSucceeded}))
		require.NoError(t, te.HandleCancel(ctx, CancelRequest{JobID: "done"}))
		require.Equal(t, StateSucceeded, te.state(t, "done"))
		require.Equal(t, 2, te.bus.count("worker."))
	})
}
