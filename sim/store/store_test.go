package store

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/kernel/kerneltest"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// testStore is a store on a kernel of its own with no faults: all that the
// store's tests need of a world.
func testStore(t testing.TB, keep bool) (*kernel.Kernel, *Store, *kernel.Trace) {
	sys := cordum.System{}
	env, _, trace := kerneltest.NewEnv(t, 3, keep, sys.Observer())
	s := New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	return env.Kernel, s, trace
}

// A replica paused longer than the lock TTL loses its job lock in virtual time;
// another replica takes the lock over, and the paused one's later write is
// fenced off when it wakes.
func TestLockExpiresUnderPausedReplica(t *testing.T) {
	k, s, trace := testStore(t, true)
	lockKey := "cordum:scheduler:job:j-x" // the engine's job lock
	c1 := s.Client("replica-1")
	c2 := s.Client("replica-2")
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
	require.Contains(t, string(trace.Bytes()), "actor=replica-1/holder redis get")
}

// A store call from a goroutine that does not hold the baton is a harness bug
// and stops the run.
func TestStoreCallWithoutBatonPanics(t *testing.T) {
	_, s, _ := testStore(t, false)
	c := s.Client("replica-1")
	require.PanicsWithValue(t, "sim: redis get from a context that carries no actor", func() {
		_ = c.Get(context.Background(), "x").Err()
	})
}

// BenchmarkStoreScript is the store's cost per script, the engine's own
// compare-and-transition (create a job, then schedule it: two EVALSHAs per
// op), with a new Lua VM per call (miniredis's default) and with the one
// reused VM the simulator runs.
//
//	go test ./sim/store -run XXX -bench 'BenchmarkStoreScript'
func BenchmarkStoreScript(b *testing.B) {
	for _, reuse := range []bool{false, true} {
		name := "vm=new-per-call"
		if reuse {
			name = "vm=reused"
		}
		b.Run(name, func(b *testing.B) {
			mr := miniredis.NewMiniRedis()
			defer mr.Close()
			mr.ReuseLua(reuse)
			c := redis.NewClient(&redis.Options{Addr: "x", Protocol: 2, DisableIdentity: true, MaxRetries: -1,
				Dialer: func(context.Context, string, string) (net.Conn, error) { return mr.Dial() }})
			defer c.Close()
			jobs := engine.NewJobStore(c)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := "bench-" + strconv.Itoa(i)
				if _, err := jobs.Transition(ctx, engine.Transition{JobID: id, To: engine.StatePending}); err != nil {
					b.Fatal(err)
				}
				if _, err := jobs.Transition(ctx, engine.Transition{JobID: id, From: engine.StatePending,
					To: engine.StateScheduled}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(2*b.N), "us/script")
		})
	}
}

// fixedClock is an engine clock that never moves: the store benchmark only
// needs a timestamp.
type fixedClock struct{}

func (fixedClock) Now() time.Time                             { return time.Unix(1_700_000_000, 0) }
func (fixedClock) Sleep(context.Context, time.Duration) error { return nil }
func (fixedClock) AfterFunc(time.Duration, func(context.Context)) engine.Timer {
	panic("fixedClock: no timers")
}

// BenchmarkRawRedis is one HSET + HGET through go-redis to miniredis over
// net.Pipe, no harness: the baseline for the hook's overhead.
func BenchmarkRawRedis(b *testing.B) {
	mr := miniredis.NewMiniRedis()
	defer mr.Close()
	c := redis.NewClient(&redis.Options{Addr: "x", Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		Dialer: func(context.Context, string, string) (net.Conn, error) { return mr.Dial() }})
	defer c.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.HSet(ctx, "job:x", "state", "RUNNING")
		c.HGet(ctx, "job:x", "state")
	}
}

// BenchmarkHarnessRedis is the same pair of commands from an actor, through the
// hook: a yield, a fault decision, a trace line and the state observation each.
func BenchmarkHarnessRedis(b *testing.B) {
	k, s, _ := testStore(b, false)
	c := s.Client("replica-1")
	k.Spawn("replica-1", "bench", func(ctx context.Context) {
		for i := 0; i < b.N; i++ {
			c.HSet(ctx, "job:x", "state", "RUNNING")
			c.HGet(ctx, "job:x", "state")
		}
	})
	b.ResetTimer()
	if err := k.Run(time.Hour, nil); err != nil {
		b.Fatal(err)
	}
}
