package store

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
)

// A failover to a copy taken a second ago: every key written since goes back
// (changed, created, deleted), a lock renewed since expires on its old
// schedule, a key that expired meanwhile stays gone, and the loss names the
// jobs it touched and records their states going back.
func TestStoreLosesTheWritesSinceTheSnapshot(t *testing.T) {
	k, s, trace := testStore(t, true)
	c := s.Client("replica-1")
	var snap Snapshot
	k.Spawn("replica-1", "writer", func(ctx context.Context) {
		a := kernel.ActorOf(ctx)
		require.NoError(t, c.HSet(ctx, "job:j-1", "state", "RUNNING", "version", 4).Err())
		require.NoError(t, c.HSet(ctx, "job:j-2", "state", "RUNNING", "version", 4).Err())
		require.NoError(t, c.Set(ctx, "cordum:scheduler:job:j-1", "token-1", 10*time.Second).Err())
		require.NoError(t, c.Set(ctx, "short", "x", 500*time.Millisecond).Err())
		require.NoError(t, c.ZAdd(ctx, "job:index:RUNNING", redis.Z{Score: 1, Member: "j-1"}, redis.Z{Score: 2, Member: "j-2"}).Err())
		a.SleepUntil(k.Now() + time.Second)
		var err error
		snap, err = s.Snapshot()
		require.NoError(t, err)
		a.SleepUntil(k.Now() + time.Second)
		require.NoError(t, c.HSet(ctx, "job:j-1", "state", "SUCCEEDED", "version", 5).Err()) // lost
		require.NoError(t, c.HSet(ctx, "job:j-3", "state", "PENDING", "version", 1).Err())   // lost: a new job
		require.NoError(t, c.Expire(ctx, "cordum:scheduler:job:j-1", 10*time.Second).Err())  // renewal lost
		require.NoError(t, c.Del(ctx, "job:j-2").Err())                                      // deletion lost
		loss, err := s.Lose(snap, "store/failover")
		require.NoError(t, err)
		require.Equal(t, []string{"j-1", "j-2", "j-3"}, loss.Jobs)
		require.Equal(t, time.Second, loss.Since)

		require.Equal(t, "RUNNING", s.Field("job:j-1", "state"))
		require.Equal(t, "RUNNING", s.Field("job:j-2", "state"))
		_, ok := s.Hash("job:j-3")
		require.False(t, ok, "a job created after the copy is gone")
		require.Equal(t, 8*time.Second, s.TTL("cordum:scheduler:job:j-1"), "the lock expires as it would have")
		_, ok = s.Get("short")
		require.False(t, ok, "expired before the failover: still gone")
		require.Len(t, s.ZScores("job:index:RUNNING"), 2)
	})
	require.NoError(t, k.Run(time.Minute, nil))
	var back []string
	for _, c := range s.hist.States {
		if c.Actor == "store/failover" {
			back = append(back, c.JobID+":"+c.From+">"+c.To)
		}
	}
	require.Equal(t, []string{"j-1:SUCCEEDED>RUNNING", "j-2:>RUNNING", "j-3:PENDING>"}, back, "%s", trace.Bytes())
	require.Len(t, s.hist.StoreLosses, 1)
}
