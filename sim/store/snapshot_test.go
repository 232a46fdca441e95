package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// A failover restores every value type as the copy held it: writes lost on
// a string, a hash, a set, a list, a sorted set and a TTL all go back. The
// keyspace after the loss is compared, byte for byte, with a dump of the
// keyspace taken through the client (a second path, not the snapshot's) when
// the copy was made.
func TestStoreLossRestoresEveryValueType(t *testing.T) {
	k, s, _ := testStore(t, true)
	c := s.Client("replica-1")
	k.Spawn("replica-1", "writer", func(ctx context.Context) {
		a := kernel.ActorOf(ctx)
		require.NoError(t, c.Set(ctx, "str", "v1", 0).Err())
		require.NoError(t, c.HSet(ctx, "hash", "a", "1", "b", "2").Err())
		require.NoError(t, c.SAdd(ctx, "set", "x", "y").Err())
		require.NoError(t, c.RPush(ctx, "list", "l1", "l2", "l3").Err())
		require.NoError(t, c.ZAdd(ctx, "zset", redis.Z{Score: 1, Member: "m1"}, redis.Z{Score: 2, Member: "m2"}).Err())
		require.NoError(t, c.Set(ctx, "ttl", "t", 30*time.Second).Err())
		want := dumpKeyspace(ctx, t, c, 0)
		snap, err := s.Snapshot()
		require.NoError(t, err)
		a.SleepUntil(k.Now() + time.Second)

		require.NoError(t, c.Set(ctx, "str", "v2", 0).Err())
		require.NoError(t, c.HSet(ctx, "hash", "a", "9", "c", "3").Err())
		require.NoError(t, c.SRem(ctx, "set", "x").Err())
		require.NoError(t, c.SAdd(ctx, "set", "z").Err())
		require.NoError(t, c.LSet(ctx, "list", 0, "changed").Err())
		require.NoError(t, c.RPush(ctx, "list", "l4").Err())
		require.NoError(t, c.ZAdd(ctx, "zset", redis.Z{Score: 5, Member: "m3"}).Err())
		require.NoError(t, c.ZIncrBy(ctx, "zset", 10, "m1").Err())
		require.NoError(t, c.ZRem(ctx, "zset", "m2").Err())
		require.NoError(t, c.Persist(ctx, "ttl").Err())
		require.NotEqual(t, want, dumpKeyspace(ctx, t, c, time.Second), "the writes changed every key")

		loss, err := s.Lose(snap, "store/failover")
		require.NoError(t, err)
		require.Equal(t, want, dumpKeyspace(ctx, t, c, time.Second))
		require.Empty(t, loss.Inconsistent, "the restore checked itself and found the copy")
	})
	require.NoError(t, k.Run(time.Minute, nil))
}

// A stream a dispatcher runs its jobs through survives a failover whole:
// its entries, its consumer group's last delivered ID, its pending entries
// with their consumers, delivery counts and idle times, and its consumers;
// so does a HyperLogLog. Entries added, delivered, claimed, acknowledged and
// deleted after the copy all go back, and the store, read through ordinary
// commands, is as it was when the copy was made.
func TestStoreLossRestoresStreamsWithTheirGroups(t *testing.T) {
	k, s, _ := testStore(t, true)
	c := s.Client("replica-1")
	k.Spawn("replica-1", "dispatcher", func(ctx context.Context) {
		a := kernel.ActorOf(ctx)
		require.NoError(t, c.XGroupCreateMkStream(ctx, "jobs", "workers", "$").Err())
		for _, job := range []string{"j-1", "j-2", "j-3"} {
			require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []string{"job", job}}).Err())
		}
		got, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w-1", Streams: []string{"jobs", ">"}, Count: 2}).Result()
		require.NoError(t, err)
		require.Len(t, got[0].Messages, 2)
		first := got[0].Messages[0].ID
		a.SleepUntil(k.Now() + 5*time.Second)
		require.NoError(t, c.XClaim(ctx, &redis.XClaimArgs{Stream: "jobs", Group: "workers", Consumer: "w-2",
			MinIdle: time.Second, Messages: []string{first}}).Err()) // delivered twice now
		require.NoError(t, c.PFAdd(ctx, "seen", "j-1", "j-2").Err())
		want := dumpStreams(ctx, t, c)
		mrDump := s.mr.Dump()
		snap, err := s.Snapshot()
		require.NoError(t, err)

		a.SleepUntil(k.Now() + time.Second)
		require.NoError(t, c.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []string{"job", "j-4"}}).Err())
		require.NoError(t, c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w-3", Streams: []string{"jobs", ">"}}).Err())
		require.NoError(t, c.XAck(ctx, "jobs", "workers", first).Err())
		require.NoError(t, c.XDel(ctx, "jobs", got[0].Messages[1].ID).Err())
		require.NoError(t, c.XGroupCreate(ctx, "jobs", "audit", "0").Err())
		require.NoError(t, c.PFAdd(ctx, "seen", "j-3", "j-4").Err())
		require.NotEqual(t, want, dumpStreams(ctx, t, c))

		loss, err := s.Lose(snap, "store/failover")
		require.NoError(t, err)
		require.Empty(t, loss.Inconsistent)
		require.Equal(t, 2, loss.Keys, "the stream and the HyperLogLog went back")
		// Idle times are a second longer: the entries were delivered when
		// they were, not at the failover.
		require.Equal(t, want, dumpStreams(ctx, t, c))
		require.Equal(t, mrDump, s.mr.Dump(), "miniredis's own view: every field of the groups")
		pending, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "jobs", Group: "workers", Start: "-", End: "+", Count: 10}).Result()
		require.NoError(t, err)
		require.Len(t, pending, 2)
		require.Equal(t, []int64{2, 1}, []int64{pending[0].RetryCount, pending[1].RetryCount})
		require.Equal(t, []string{"w-2", "w-1"}, []string{pending[0].Consumer, pending[1].Consumer})
		require.Equal(t, []time.Duration{time.Second, 6 * time.Second}, []time.Duration{pending[0].Idle, pending[1].Idle})
		// A new entry after the failover gets an ID past the restored ones.
		id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []string{"job", "j-5"}}).Result()
		require.NoError(t, err)
		require.Greater(t, id, got[0].Messages[1].ID)
	})
	require.NoError(t, k.Run(time.Minute, nil))
}

// dumpStreams renders every stream through XRANGE, XINFO GROUPS, XINFO
// CONSUMERS and XPENDING (idle times left out: they grow), and every other
// key by TYPE and, for a HyperLogLog, PFCOUNT.
func dumpStreams(ctx context.Context, t *testing.T, c *redis.Client) string {
	t.Helper()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	slices.Sort(keys)
	var b strings.Builder
	for _, key := range keys {
		kind, err := c.Type(ctx, key).Result()
		require.NoError(t, err)
		if kind != "stream" {
			n, err := c.PFCount(ctx, key).Result()
			require.NoError(t, err)
			fmt.Fprintf(&b, "%s %s %d\n", key, kind, n)
			continue
		}
		entries, err := c.XRange(ctx, key, "-", "+").Result()
		require.NoError(t, err)
		fmt.Fprintf(&b, "%s %v\n", key, entries)
		groups, err := c.XInfoGroups(ctx, key).Result()
		require.NoError(t, err)
		for _, g := range groups {
			fmt.Fprintf(&b, "  group %s last %s consumers %d pending %d\n", g.Name, g.LastDeliveredID, g.Consumers, g.Pending)
			pending, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 100}).Result()
			require.NoError(t, err)
			for _, p := range pending {
				fmt.Fprintf(&b, "    pending %s %s deliveries %d\n", p.ID, p.Consumer, p.RetryCount)
			}
			consumers, err := c.XInfoConsumers(ctx, key, g.Name).Result()
			require.NoError(t, err)
			for _, cons := range consumers {
				fmt.Fprintf(&b, "    consumer %s pending %d\n", cons.Name, cons.Pending)
			}
		}
	}
	return b.String()
}

// A restore that does not give back what the copy held says so: here the
// copy's typed values (what Restore writes) disagree with the keyspace as
// the store's own dump saw it when the copy was made, as they did when a
// snapshot kept miniredis's live sorted set.
func TestUnfaithfulRestoreIsReported(t *testing.T) {
	k, s, _ := testStore(t, true)
	c := s.Client("replica-1")
	k.Spawn("replica-1", "writer", func(ctx context.Context) {
		a := kernel.ActorOf(ctx)
		require.NoError(t, c.ZAdd(ctx, "job:index:RUNNING", redis.Z{Score: 1, Member: "j-1"}).Err())
		require.NoError(t, c.Set(ctx, "note", "n", 0).Err())
		require.NoError(t, c.Set(ctx, "lock", "tok", 30*time.Second).Err())
		snap, err := s.Snapshot()
		require.NoError(t, err)
		a.SleepUntil(k.Now() + time.Second)
		running := snap.keys["job:index:RUNNING"]
		running.copy = snap.keys["note"].copy // the copy mixed up two keys
		snap.keys["job:index:RUNNING"] = running
		lock := snap.keys["lock"]
		lock.ttl = time.Minute // and of a lock's expiry
		snap.keys["lock"] = lock

		loss, err := s.Lose(snap, "store/failover")
		require.NoError(t, err)
		require.Len(t, loss.Inconsistent, 2, "%v", loss.Inconsistent)
		require.Contains(t, loss.Inconsistent[0], "key job:index:RUNNING: restored as")
		require.Contains(t, loss.Inconsistent[1], "key lock: restored as")
	})
	require.NoError(t, k.Run(time.Minute, nil))
}

// dumpKeyspace renders every key through ordinary commands; a TTL is shown
// as it was elapsed ago, so dumps taken at two moments compare.
func dumpKeyspace(ctx context.Context, t *testing.T, c *redis.Client, elapsed time.Duration) string {
	t.Helper()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	slices.Sort(keys)
	var b strings.Builder
	for _, key := range keys {
		kind, err := c.Type(ctx, key).Result()
		require.NoError(t, err)
		var v any
		switch kind {
		case "string":
			v, err = c.Get(ctx, key).Result()
		case "hash":
			v, err = c.HGetAll(ctx, key).Result()
		case "set":
			var m []string
			m, err = c.SMembers(ctx, key).Result()
			slices.Sort(m)
			v = m
		case "list":
			v, err = c.LRange(ctx, key, 0, -1).Result()
		case "zset":
			v, err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
		}
		require.NoError(t, err)
		ttl, err := c.PTTL(ctx, key).Result()
		require.NoError(t, err)
		if ttl > 0 {
			ttl += elapsed
		}
		fmt.Fprintf(&b, "%s %s %v ttl=%s\n", key, kind, v, ttl)
	}
	return b.String()
}
