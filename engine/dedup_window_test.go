package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Swarm seed 103661: a publish fails although the broker stored it; the job is
// rolled back; the worker runs the stored copy, but failing store reads keep
// its result out; the replayer re-drives the job 128.8s after the first
// publish, past the broker's 120s duplicate window. The re-publish must be
// withheld: the job waits DISPATCHED and the first copy's result completes it.
func TestRedispatchOutsideDedupWindowIsWithheld(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.stored = true
		te.bus.failNext("worker.", 1)

		var ra *RetryAfterError
		require.ErrorAs(t, te.HandleJobRequest(ctx, req("j1")), &ra)
		require.Equal(t, PhasePublish, ra.Phase)
		require.Equal(t, StateScheduled, te.state(t, "j1"))
		require.Equal(t, 1, te.bus.count("worker."), "the broker stored the first copy")
		require.Equal(t, DispatchMessageID("j1", 0), te.bus.published[0].Msg.ID)

		// The worker ran the stored copy; while reads fail, neither its result
		// nor the request's redeliveries get anywhere.
		result := JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded, ResultPtr: "mem://j1", DispatchGen: 0}
		te.hook.add(commandIs("hgetall", jobKey("j1")), false, -1)
		for range 10 {
			te.env.clock.Advance(10 * time.Second)
			_, retry := AsRetryAfter(te.HandleJobResult(ctx, result))
			require.True(t, retry)
			_, retry = AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
			require.True(t, retry)
		}
		te.hook.clear()

		te.env.clock.Advance(28800 * time.Millisecond) // 128.8s after the first publish
		te.heartbeat("w2", "general", 0)               // a live worker to re-publish to
		require.NoError(t, te.ReplayPendingOnce(ctx))
		require.Equal(t, 1, te.bus.count("worker."), "no second publish outside the window")
		require.Equal(t, StateDispatched, te.state(t, "j1"))
		require.Equal(t, 1.0, te.counter(te.metrics.republishWithheld.WithLabelValues("default")))

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")), "the parked job is gated")
		require.Equal(t, 1, te.bus.count("worker."))

		require.NoError(t, te.HandleJobResult(ctx, result))
		j := te.job(t, "j1")
		require.Equal(t, StateSucceeded, j.State)
		require.Equal(t, "mem://j1", j.ResultPtr)
	})
}

// Inside the window a failed publish is retried under the same message id:
// the broker drops that copy if the first one was stored.
func TestRedispatchInsideDedupWindowRepublishesSameID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.failNext("worker.", 1) // clean: nothing stored

		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		te.env.clock.Advance(DefaultDedupWindow - time.Second)
		te.heartbeat("w1", "general", 0)
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
		require.Equal(t, DispatchMessageID("j1", 0), te.bus.published[0].Msg.ID)
		require.Equal(t, StateRunning, te.state(t, "j1"))
		require.Equal(t, 0.0, te.counter(te.metrics.republishWithheld.WithLabelValues("default")))
	})
}

// The documented cost: when the failed publish was never stored and the window
// has passed, nothing will ever run the job; the reconciler times it out after
// the dispatch timeout, counted from when it was parked.
func TestWithheldRepublishWithNoStoredCopyTimesOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.failNext("worker.", 1)

		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		te.env.clock.Advance(DefaultDedupWindow)
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 0, te.bus.count("worker."))
		require.Equal(t, StateDispatched, te.state(t, "j1"))

		te.env.clock.Advance(DefaultDispatchTimeout)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, te.state(t, "j1"))
		entry, err := te.store.DLQEntry(ctx, "j1")
		require.NoError(t, err)
		require.Equal(t, ReasonDispatchTimeout, entry.ReasonCode)
		require.Equal(t, 0, te.bus.count("worker."))
	})
}

// A legitimate re-dispatch after RETRYING has its own message id, so its
// window starts afresh however long the first generation took.
func TestRetryingGenerationHasItsOwnDedupWindow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		te.env.clock.Advance(10 * time.Minute)
		te.heartbeat("w1", "general", 0)
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", WorkerID: "w1", Status: ResultFailedRetryable}))
		require.Equal(t, StateRetrying, te.state(t, "j1"))

		te.bus.failNext("worker.", 1)
		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		te.env.clock.Advance(5 * time.Second)
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 2, te.bus.count("worker."))
		require.Equal(t, DispatchMessageID("j1", 1), te.bus.published[1].Msg.ID)
		require.Equal(t, StateRunning, te.state(t, "j1"))
	})
}

// World-swarm seed 600093: after an ambiguous publish to w1 the pick names
// w2. A copy on w2's subject may sit in another stream, where the broker
// would keep it beside the first: the re-publish is withheld and the job
// waits DISPATCHED for the first copy's result, as outside the window.
func TestRedispatchToAnotherWorkerSubjectIsWithheld(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.stored = true
		te.bus.failNext("worker.", 1)

		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		require.Equal(t, WorkerSubject("w1"), te.bus.published[0].Subject)

		te.env.clock.Advance(DefaultWorkerTTL + time.Second) // w1 falls silent, inside the window
		te.heartbeat("w2", "general", 0)
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."), "no copy on w2's subject")
		require.Equal(t, StateDispatched, te.state(t, "j1"))
		require.Equal(t, 1.0, te.counter(te.metrics.republishWithheld.WithLabelValues("default")))

		result := JobResult{JobID: "j1", WorkerID: "w1", Status: ResultSucceeded, ResultPtr: "mem://j1", DispatchGen: 0}
		require.NoError(t, te.HandleJobResult(ctx, result))
		require.Equal(t, StateSucceeded, te.state(t, "j1"))
	})
}

// While the first copy's worker can still take the job, the re-publish goes
// to it, though another worker is now less loaded: the broker drops the copy
// if the first was stored.
func TestRedispatchKeepsTheFirstCopysWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.failNext("worker.", 1)

		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		te.heartbeat("w1", "general", 2) // busier than w2 now
		te.heartbeat("w2", "general", 0)
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
		require.Equal(t, WorkerSubject("w1"), te.bus.published[0].Subject)
		require.Equal(t, DispatchMessageID("j1", 0), te.bus.published[0].Msg.ID)
		require.Equal(t, StateRunning, te.state(t, "j1"))
	})
}
