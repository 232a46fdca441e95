package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// A replica paused longer than the lock TTL loses its job lock in virtual time;
// another replica takes the lock over, and the paused one's later write is
// fenced off when it wakes.
func TestLockExpiresUnderPausedReplica(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 3, KeepTrace: true})
	t.Cleanup(w.store.close)
	k := w.k
	lockKey := "cordum:scheduler:job:j-x" // the engine's job lock
	c1 := w.store.client("replica-1")
	c2 := w.store.client("replica-2")
	var takenOver bool
	var firstTTL time.Duration
	k.Spawn("replica-1", "holder", func(ctx context.Context) {
		ok, err := c1.SetNX(ctx, lockKey, "token-1", 60*time.Second).Result()
		require.NoError(t, err)
		require.True(t, ok)
		firstTTL = c1.PTTL(ctx, lockKey).Val()
		k.PauseGroup("replica-1", k.Now()+90*time.Second)
		kernel.ActorOf(ctx).Yield() // paused here for 90s
		v, err := c1.Get(ctx, lockKey).Result()
		require.NoError(t, err)
		require.Equal(t, "token-2", v, "the lock moved on while we were paused")
	})
	k.At(time.Second, func() {
		k.Spawn("replica-2", "taker", func(ctx context.Context) {
			a := kernel.ActorOf(ctx)
			for i := 0; i < 400; i++ {
				ok, err := c2.SetNX(ctx, lockKey, "token-2", 60*time.Second).Result()
				require.NoError(t, err)
				if ok {
					takenOver = true
					require.GreaterOrEqual(t, k.Now(), 60*time.Second, "not before the TTL ran out")
					require.Less(t, k.Now(), 61*time.Second)
					return
				}
				a.SleepUntil(k.Now() + 500*time.Millisecond)
			}
		})
	})
	require.NoError(t, k.Run(time.Hour, nil))
	require.Equal(t, 60*time.Second, firstTTL)
	require.True(t, takenOver)
	require.Contains(t, string(w.Trace().Bytes()), "actor=replica-1/holder redis get")
}

// A store call from a goroutine that does not hold the baton is a harness bug
// and stops the run.
func TestStoreCallWithoutBatonPanics(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 1})
	t.Cleanup(w.store.close)
	c := w.store.client("replica-1")
	require.PanicsWithValue(t, "sim: redis get from a context that carries no actor", func() {
		_ = c.Get(context.Background(), "x").Err()
	})
}

// The engine inside the simulator reads only virtual time: a run ends at a
// virtual time far beyond the wall time it took.
func TestEngineRunsOnVirtualTime(t *testing.T) {
	start := time.Now()
	w := NewWorld(Config{System: cordum.System{}, Seed: 9, Workload: Workload{Jobs: 5}})
	w.Start()
	require.NoError(t, w.Advance(10*time.Minute))
	jobs := 0
	for _, key := range w.store.Keys() {
		if _, ok := w.obs.JobKey(key); ok {
			jobs++
			updated := w.store.Field(key, "updated_at")
			require.True(t, strings.HasPrefix(updated, "1767"), "timestamps come from the virtual epoch (2026-01-01): %s", updated)
		}
	}
	require.Equal(t, 5, jobs)
	res := w.Finish()
	require.NoError(t, res.Err)
	wall := time.Since(start)
	require.Greater(t, res.History.End, 100*wall, "virtual %s vs wall %s", res.History.End, wall)
}
