package dispatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// dispatched submits a job and relays it: RUNNING at worker w1.
func dispatched(t *testing.T, r *testReplica, id string) {
	t.Helper()
	r.submit(t, id)
	require.Equal(t, 1, r.relay(t))
	require.Equal(t, StateRunning, r.state(t, id))
}

func TestResultsMoveTheJobAndFailedWritesItsDLQEntry(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	dispatched(t, r, "ok")
	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "ok", WorkerID: "w1", Status: ResultSucceeded, ResultPtr: "s3://r"}))
	job := r.job(t, "ok")
	require.Equal(t, StateSucceeded, job.State)
	require.Equal(t, "s3://r", job.ResultPtr)

	dispatched(t, r, "bad")
	env.hook.failScript(transitionScript, false, 1)
	err := r.HandleJobResult(ctx, JobResult{JobID: "bad", WorkerID: "w1", Status: ResultFailed, Error: "boom"})
	_, retry := AsRetryAfter(err)
	require.True(t, retry)
	require.Equal(t, StateRunning, r.state(t, "bad"))
	_, err = r.store.DLQEntry(ctx, "bad")
	require.ErrorIs(t, err, ErrJobNotFound, "a failed script writes neither state nor DLQ entry")

	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "bad", WorkerID: "w1", Status: ResultFailed, Error: "boom"}))
	require.Equal(t, StateFailed, r.state(t, "bad"))
	entry, err := r.store.DLQEntry(ctx, "bad")
	require.NoError(t, err)
	require.Equal(t, ReasonJobFailed, entry.ReasonCode)
	require.Equal(t, 1, r.relay(t))
	require.Len(t, env.bus.to(SubjectDLQ), 1)
}

// A late or duplicate result on a terminal job is ignored, and so is a result
// of an earlier dispatch generation.
func TestResultAfterTerminalIsIgnored(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	dispatched(t, r, "j1")
	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded}))
	v := r.job(t, "j1").Version
	for _, st := range []string{ResultFailed, ResultFailedRetryable, ResultSucceeded, "BOGUS"} {
		require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: st}))
	}
	require.Equal(t, StateSucceeded, r.state(t, "j1"))
	require.Equal(t, v, r.job(t, "j1").Version)
	_, err := r.store.DLQEntry(ctx, "j1")
	require.ErrorIs(t, err, ErrJobNotFound)
	require.Equal(t, 4.0, r.counter(t, "outbox_result_ignored_total", "terminal"))
}

// A retryable failure earns one re-dispatch under a new message id; the old
// generation's late result is ignored.
func TestRetryableFailureRedispatchesUnderNewMessageID(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	dispatched(t, r, "j1")
	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultFailedRetryable}))
	require.Equal(t, StateRetrying, r.state(t, "j1"))

	env.clock.Advance(DefaultReplayAfter)
	r.heartbeat(t)
	require.NoError(t, r.ReplayPendingOnce(ctx))
	require.Equal(t, 1, r.relay(t))
	msgs := env.bus.to("worker.")
	require.Len(t, msgs, 2)
	require.Equal(t, "jobreq:j1:1", msgs[1].ID)
	require.Equal(t, 1, packetOf(t, msgs[1]).DispatchGen)
	require.NotEqual(t, packetOf(t, msgs[0]).DispatchID, packetOf(t, msgs[1]).DispatchID)

	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded, DispatchGen: 0}))
	require.Equal(t, StateRunning, r.state(t, "j1"))
	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded, DispatchGen: 1}))
	require.Equal(t, StateSucceeded, r.state(t, "j1"))
}

// No path leaves a terminal state: every handler and every transition the
// store is asked for is refused or ignored, and nothing is written.
func TestTerminalStatesAreNeverLeft(t *testing.T) {
	for _, terminal := range AllStates {
		if !terminal.Terminal() {
			continue
		}
		t.Run(string(terminal), func(t *testing.T) {
			env := newTestEnv(t)
			r := env.replica(t)
			putJob(t, r, "j1", terminal)
			before := env.mr.HGet(JobKey("j1"), "version")

			r.submit(t, "j1")
			require.NoError(t, r.HandleCancel(ctx, CancelRequest{JobID: "j1"}))
			require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultFailedRetryable}))
			env.clock.Advance(DefaultRunningTimeout)
			require.NoError(t, r.ReconcileOnce(ctx))
			require.NoError(t, r.ReplayPendingOnce(ctx))
			for _, to := range AllStates {
				_, err := r.store.Transition(ctx, Transition{JobID: "j1", From: terminal, To: to})
				require.ErrorContains(t, err, string(RefusedTerminal), "%s -> %s", terminal, to)
			}
			_, err := r.store.Dispatch(ctx, Dispatch{JobID: "j1", From: terminal, DispatchID: "d", Worker: "w1",
				Subject: WorkerSubject("w1"), MessageID: "jobreq:j1", Packet: []byte("{}")})
			require.ErrorContains(t, err, string(RefusedTerminal))

			require.Equal(t, terminal, r.state(t, "j1"))
			require.Equal(t, before, env.mr.HGet(JobKey("j1"), "version"))
			require.EqualValues(t, 0, r.pending(t))
			require.Equal(t, 0, r.relay(t))
		})
	}
}

// putJob creates a job and walks it along allowed edges to state.
func putJob(t *testing.T, r *testReplica, id string, state JobState) {
	t.Helper()
	path := map[JobState][]JobState{
		StatePending:    {StatePending},
		StateScheduled:  {StatePending, StateScheduled},
		StateDispatched: {StatePending, StateScheduled, StateDispatched},
		StateRunning:    {StatePending, StateScheduled, StateDispatched, StateRunning},
		StateRetrying:   {StatePending, StateScheduled, StateDispatched, StateRetrying},
		StateSucceeded:  {StatePending, StateScheduled, StateDispatched, StateSucceeded},
		StateFailed:     {StatePending, StateFailed},
		StateCancelled:  {StatePending, StateCancelled},
		StateTimeout:    {StatePending, StateScheduled, StateDispatched, StateTimeout},
		StateDenied:     {StatePending, StateDenied},
	}[state]
	require.NotEmpty(t, path, "no path to %s", state)
	from := JobState("")
	for _, to := range path {
		fields := []Field(nil)
		if from == "" {
			fields = jobFields(JobRequest{JobID: id, Topic: "default"})
		}
		_, err := r.store.Transition(ctx, Transition{JobID: id, From: from, To: to, Fields: fields})
		require.NoError(t, err, "%s -> %s", from, to)
		from = to
	}
}

// Cancel before the request creates the job CANCELLED, and the request is
// then skipped.
func TestCancelBeforeRequest(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	require.NoError(t, r.HandleCancel(ctx, CancelRequest{JobID: "j1", Reason: "user"}))
	r.submit(t, "j1")
	require.Equal(t, StateCancelled, r.state(t, "j1"))
	require.EqualValues(t, 0, r.pending(t))
}
