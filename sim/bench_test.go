package sim

import (
	"context"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/engine"
)

// BenchmarkSeed runs release-size seeds (50 jobs, 3 replicas, 4 workers, every
// fault point active) and reports seeds/s, simulated events/s, how much faster
// than real time the simulation runs, and store commands and scripts per seed
// and per submitted job (the store's Lua scripts dominate a seed's cost).
//
//	GOMAXPROCS=1 go test ./sim -run XXX -bench 'BenchmarkSeed$' -benchtime 40x
func BenchmarkSeed(b *testing.B) {
	var steps, cmds, scripts, jobs uint64
	var virtual time.Duration
	start := time.Now()
	for i := 0; i < b.N; i++ {
		seed := uint64(i + 1)
		res := NewWorld(Config{System: cordum.System{}, Seed: seed, Injector: newChaos(seed, 0.02),
			Workload: Workload{Jobs: 50, StatusReads: 20, CancelRate: 0.05}}).Run()
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		steps += res.Steps
		cmds += uint64(res.History.Redis.Commands)
		scripts += uint64(res.History.Redis.Scripts)
		jobs += uint64(len(res.History.Submitted))
		virtual += res.History.End
	}
	wall := time.Since(start)
	n := float64(b.N)
	b.ReportMetric(n/wall.Seconds(), "seeds/s")
	b.ReportMetric(float64(steps)/wall.Seconds(), "events/s")
	b.ReportMetric(virtual.Seconds()/wall.Seconds(), "sim/wall")
	b.ReportMetric(float64(cmds)/n, "cmds/seed")
	b.ReportMetric(float64(scripts)/n, "scripts/seed")
	if jobs > 0 {
		b.ReportMetric(float64(cmds)/float64(jobs), "cmds/job")
		b.ReportMetric(float64(scripts)/float64(jobs), "scripts/job")
	}
}

// BenchmarkStoreScript is the store's cost per script, the engine's own
// compare-and-transition (create a job, then schedule it: two EVALSHAs per
// op), with a new Lua VM per call (miniredis's default) and with the one
// reused VM the simulator runs.
//
//	go test ./sim -run XXX -bench 'BenchmarkStoreScript'
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
			jobs := engine.NewJobStore(c, fixedClock{})
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
	w := NewWorld(Config{System: cordum.System{}, Seed: 1})
	defer w.store.close()
	c := w.store.client("replica-1")
	w.k.Spawn("replica-1", "bench", func(ctx context.Context) {
		for i := 0; i < b.N; i++ {
			c.HSet(ctx, "job:x", "state", "RUNNING")
			c.HGet(ctx, "job:x", "state")
		}
	})
	b.ResetTimer()
	if err := w.k.Run(time.Hour, nil); err != nil {
		b.Fatal(err)
	}
}
