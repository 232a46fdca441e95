package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReconcilerTimesOutStuckJobsPerTopic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env, func(c *Config) {
			c.DispatchTimeoutByTopic = map[string]time.Duration{"fast": 10 * time.Second}
		})
		te.putJob(t, "slow", StateDispatched)
		te.putJob(t, "fast", StateDispatched)
		require.NoError(t, env.rdb.HSet(ctx, jobKey("fast"), "topic", "fast").Err())
		te.putJob(t, "run", StateRunning)

		te.env.clock.Advance(10 * time.Second)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, te.state(t, "fast"))
		require.Equal(t, StateDispatched, te.state(t, "slow"))

		te.env.clock.Advance(DefaultDispatchTimeout)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, te.state(t, "slow"))
		require.Equal(t, StateRunning, te.state(t, "run"))

		te.env.clock.Advance(DefaultRunningTimeout)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, te.state(t, "run"))
		entry, err := te.store.DLQEntry(ctx, "run")
		require.NoError(t, err)
		require.Equal(t, ReasonRunningTimeout, entry.ReasonCode)
		require.Equal(t, 3, te.bus.count(SubjectDLQ))
	})
}

// The reconciler holds the job's lock from its read to its write: a result
// arriving in between is asked to retry, then finds the job TIMEOUT and leaves
// it so. (A writer without the lock is refused by the version check below.)
func TestReconcilerHoldsTheLockAgainstALateResult(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.dispatch(t, "j1")
		te.env.clock.Advance(DefaultRunningTimeout)

		raced := false
		te.hook.add(func(args []any) bool {
			if transitionTo(StateTimeout)(args) && !raced {
				raced = true
				_, retry := AsRetryAfter(te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded}))
				require.True(t, retry, "the result waits for the reconciler's lock")
			}
			return false
		}, false, 1)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.True(t, raced)
		require.Equal(t, StateTimeout, te.state(t, "j1"))
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded}))
		require.Equal(t, StateTimeout, te.state(t, "j1"))
	})
}

// A job rolled back and re-dispatched between the reconciler's read and its write
// (ABA on the state alone) is not timed out: the version moved.
func TestReconcilerChecksVersionNotJustState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j1", StateDispatched)
		te.env.clock.Advance(DefaultDispatchTimeout)
		raced := false
		te.hook.add(func(args []any) bool {
			if transitionTo(StateTimeout)(args) && !raced {
				raced = true
				j := te.job(t, "j1")
				r, err := te.store.Transition(ctx, Transition{JobID: "j1", From: StateDispatched, Version: j.Version, To: StateScheduled})
				require.NoError(t, err)
				_, err = te.store.Transition(ctx, Transition{JobID: "j1", From: StateScheduled, Version: r.Version, To: StateDispatched})
				require.NoError(t, err)
			}
			return false
		}, false, 1)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.True(t, raced)
		require.Equal(t, StateDispatched, te.state(t, "j1"))
	})
}

func TestReplayerRedrivesStaleJobs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "p", StatePending)
		te.putJob(t, "s", StateScheduled)
		te.putJob(t, "d", StateDispatched)
		require.NoError(t, te.ReplayPendingOnce(ctx))
		require.Equal(t, 0, te.bus.count("worker."), "nothing stale yet")

		te.env.clock.Advance(DefaultReplayAfter)
		te.heartbeat("w1", "general", 0) // still alive
		require.NoError(t, te.ReplayPendingOnce(ctx))
		require.Equal(t, StateRunning, te.state(t, "p"))
		require.Equal(t, StateRunning, te.state(t, "s"))
		require.Equal(t, StateDispatched, te.state(t, "d"))
		require.Equal(t, 2, te.bus.count("worker."))
	})
}

// World swarm: a handler wrote DISPATCHED and, before its publish returned,
// the reconciler (on a replica whose clock ran ahead) timed the job out; the
// handler's publish then dispatched a job already TIMEOUT, and it ran. The
// reconciler now times a job out only under its lock, so it waits for the
// handler's publish.
func TestReconcilerDoesNotTimeOutAJobWhoseHandlerHoldsItsLock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j1", StateDispatched)
		te.env.clock.Advance(DefaultDispatchTimeout)
		held, err := te.locks.acquire(ctx, jobLockKey("j1"), lockSpec{TTL: time.Minute, Poll: time.Millisecond})
		require.NoError(t, err)

		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateDispatched, te.state(t, "j1"), "the handler is between its write and its publish")

		require.NoError(t, te.locks.release(ctx, held))
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, te.state(t, "j1"))
	})
}

// The reconciler's lock runs out between its read of a job and its write (a
// pause past the TTL), and the job's result lands under a lock of its own.
// The reconciler's TIMEOUT write is fenced by the token it lost, so it is
// refused whatever state it would land on: the fence, not the state the
// reconciler read, keeps it from overwriting the result.
func TestReconcilerWriteLandsOnlyUnderItsLock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.dispatch(t, "j1")
		te.env.clock.Advance(DefaultRunningTimeout)

		read, raced := false, false
		te.hook.add(func(args []any) bool {
			switch {
			case raced:
			case read:
				// The command after the reconciler's read, before it runs.
				raced = true
				te.env.clock.Advance(DefaultLockTTL)
				te.env.expireKey(t, jobLockKey("j1"))
				require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "j1", Status: ResultSucceeded, ResultPtr: "s3://r/1"}))
			case commandIs("hgetall", jobKey("j1"))(args):
				read = true
			}
			return false
		}, false, -1)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.True(t, raced)
		te.hook.clear()

		j := te.job(t, "j1")
		require.Equal(t, StateSucceeded, j.State)
		require.Equal(t, "s3://r/1", j.ResultPtr)
		_, err := te.store.DLQEntry(ctx, "j1")
		require.ErrorIs(t, err, ErrJobNotFound, "no TIMEOUT entry")
	})
}
