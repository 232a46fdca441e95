package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A job whose dispatch never left the outbox (the bus is down) times out
// after the dispatch timeout, and its stale dispatch is then dropped, never
// published; a RUNNING job times out after the running timeout. Each TIMEOUT
// carries a DLQ entry announced through the outbox.
func TestReconcilerTimesOutStuckJobs(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	dispatched(t, r, "run")
	r.submit(t, "stuck")
	env.bus.failNext("worker.", 1000)
	require.Equal(t, 0, r.relay(t))

	env.clock.Advance(DefaultDispatchTimeout - time.Second)
	require.NoError(t, r.ReconcileOnce(ctx))
	require.Equal(t, StateDispatched, r.state(t, "stuck"), "not before its time")

	env.clock.Advance(time.Second)
	require.NoError(t, r.ReconcileOnce(ctx))
	require.Equal(t, StateTimeout, r.state(t, "stuck"))
	entry, err := r.store.DLQEntry(ctx, "stuck")
	require.NoError(t, err)
	require.Equal(t, ReasonDispatchTimeout, entry.ReasonCode)
	require.Equal(t, StateRunning, r.state(t, "run"))

	env.clock.Advance(DefaultRunningTimeout)
	require.NoError(t, r.ReconcileOnce(ctx))
	require.Equal(t, StateTimeout, r.state(t, "run"))
	entry, err = r.store.DLQEntry(ctx, "run")
	require.NoError(t, err)
	require.Equal(t, ReasonRunningTimeout, entry.ReasonCode)

	env.clock.Advance(DefaultRelayLease)
	require.Equal(t, 2, r.relay(t), "two DLQ announcements")
	require.Len(t, env.bus.to(SubjectDLQ), 2)
	require.Len(t, env.bus.to("worker."), 1, "the stuck job's dispatch was dropped, not published")
	require.Equal(t, 1.0, r.counter(t, "outbox_entries_dropped_total", "terminal"))
	require.Equal(t, 2.0, r.counter(t, "outbox_reconciler_timeout_total"))
}

// The reconciler observes a stuck RUNNING job, then the worker's result lands
// before its write: the compare-and-transition refuses, and the result stands.
func TestReconcilerNeverOverwritesLateResult(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	dispatched(t, r, "j1")
	env.clock.Advance(DefaultRunningTimeout)

	job := r.job(t, "j1")
	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded}))
	_, err := r.store.Transition(ctx, Transition{JobID: "j1", From: job.State, Version: job.Version, To: StateTimeout,
		DLQ: &DLQEntry{JobID: "j1", ReasonCode: ReasonRunningTimeout}})
	require.True(t, IsTransitionRefused(err))
	require.NoError(t, r.ReconcileOnce(ctx))
	require.Equal(t, StateSucceeded, r.state(t, "j1"))
	_, err = r.store.DLQEntry(ctx, "j1")
	require.ErrorIs(t, err, ErrJobNotFound)
}
