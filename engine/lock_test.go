package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// DEF-3: a handler whose lock expired under it (a pause longer than the TTL) and
// was taken over must not write again. Renewal sees the takeover, cancels the
// section, and its transition is refused.
func TestLockFencingAfterTakeover(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j", StateScheduled)
		key := jobLockKey("j")

		err := te.withJobLock(ctx, "j", func(sctx context.Context, lock *heldLock) error {
			env.expireKey(t, key)
			require.NoError(t, env.rdb.Set(ctx, key, "other-handler", 0).Err())
			_ = te.clock.Sleep(sctx, DefaultLockTTL/3) // renewal fires and finds the lock taken
			require.Error(t, sctx.Err(), "section cancelled")
			_, err := te.store.Transition(sctx, Transition{JobID: "j", From: StateScheduled, To: StateDispatched, Fence: lock})
			require.ErrorIs(t, err, ErrLockLost)
			// Even a write that ignores the context is refused by the token check.
			_, err = te.store.Transition(ctx, Transition{JobID: "j", From: StateScheduled, To: StateDispatched, Fence: lock})
			var terr *TransitionError
			require.ErrorAs(t, err, &terr)
			require.Equal(t, RefusedFenced, terr.Reason)
			return err
		})
		_, retry := AsRetryAfter(err)
		require.True(t, retry, "a fenced section asks for redelivery: %v", err)
		require.Equal(t, StateScheduled, te.state(t, "j"))
		require.Equal(t, 1.0, te.counter(te.metrics.lockFenced))
		v, _ := env.rdb.Get(ctx, key).Result()
		require.Equal(t, "other-handler", v, "release never deletes another holder's lock")
	})
}

// After three failed renewals in a row the lock is abandoned and the section fenced.
func TestLockAbandonedAfterThreeFailedRenewals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.hook.add(func(args []any) bool { return isScript(args, renewLockScript) }, false, -1)
		var cancelledAfter time.Duration
		start := te.clock.Now()
		_ = te.withJobLock(ctx, "j", func(sctx context.Context, _ *heldLock) error {
			for i := 0; i < 10 && sctx.Err() == nil; i++ {
				_ = te.clock.Sleep(sctx, DefaultLockTTL/3)
			}
			cancelledAfter = te.clock.Now().Sub(start)
			return nil
		})
		require.Equal(t, DefaultLockTTL, cancelledAfter, "third failure at 3 x TTL/3")
		require.ErrorIs(t, context.Cause(ctxAbandoned(t, te)), ErrLockLost)
	})
}

// ctxAbandoned runs a section whose renewals all fail and returns its context.
func ctxAbandoned(t *testing.T, te *testEngine) context.Context {
	t.Helper()
	var out context.Context
	_ = te.withJobLock(ctx, "k", func(sctx context.Context, _ *heldLock) error {
		for i := 0; i < 10 && sctx.Err() == nil; i++ {
			_ = te.clock.Sleep(sctx, DefaultLockTTL/3)
		}
		out = sctx
		return nil
	})
	return out
}

// A renewal that succeeds resets the failure count: a failure, a success, then two
// failures do not abandon the lock. (Three failures in a row take the lock to its
// TTL: the third renewal falls due exactly as the key expires.)
func TestLockRenewalKeepsSectionAlive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		renewals := 0
		te.hook.add(func(args []any) bool {
			if !isScript(args, renewLockScript) {
				return false
			}
			renewals++
			return renewals != 2
		}, false, -1)
		err := te.withJobLock(ctx, "j", func(sctx context.Context, _ *heldLock) error {
			require.NoError(t, te.clock.Sleep(sctx, 4*DefaultLockTTL/3))
			require.NoError(t, context.Cause(sctx))
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, 4, renewals)
		require.Zero(t, env.rdb.Exists(ctx, jobLockKey("j")).Val(), "released")
	})
}

// A busy lock is polled for LockWait, then the request is retried after 500ms.
func TestLockBusyRetriesAfter500ms(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		require.NoError(t, env.rdb.Set(ctx, jobLockKey("j"), "other", time.Hour).Err())
		polls := 0
		te.hook.add(func(args []any) bool {
			if commandIs("set", jobLockKey("j"))(args) {
				polls++
			}
			return false
		}, false, -1)
		start := te.clock.Now()
		var ra *RetryAfterError
		require.ErrorAs(t, te.HandleJobRequest(ctx, req("j")), &ra)
		require.ErrorIs(t, ra, ErrLockBusy)
		require.Equal(t, PhaseLock, ra.Phase)
		require.Equal(t, DefaultLockBusyRetry, ra.Delay)
		require.Equal(t, DefaultLockWait, te.clock.Now().Sub(start))
		require.Equal(t, int(DefaultLockWait/DefaultLockPoll)+1, polls)
		require.Equal(t, 0, te.bus.count("worker."))
	})
}
