package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// chaos fires every effect at every point it applies to, at a low rate, so a
// determinism test covers every fault path of the kernel.
type chaos struct {
	rng  *rand.Rand
	rate float64
}

func newChaos(seed uint64, rate float64) *chaos {
	return &chaos{rng: rand.New(rand.NewPCG(seed, 0xc4a05)), rate: rate}
}

func (c *chaos) At(p *Point) (Fault, bool) {
	if c.rng.Float64() >= c.rate {
		return Fault{}, false
	}
	var effects []Effect
	switch p.Kind {
	case PointRedis:
		if p.Group == "clients" || p.Group == "gateway" {
			effects = []Effect{EffectFailBeforeApply, EffectReplyLostAfterApply, EffectDelay}
		} else {
			effects = []Effect{EffectFailBeforeApply, EffectReplyLostAfterApply, EffectDelay, EffectCrash, EffectCrashAfterApply, EffectPause}
		}
	case PointPublish:
		effects = []Effect{EffectFailClean, EffectFailStored, EffectDelay}
	case PointDeliver:
		effects = []Effect{EffectDuplicate, EffectDelay}
	case PointAck:
		effects = []Effect{EffectAckLost}
	case PointWorker:
		effects = []Effect{EffectCrash, EffectDuplicateResult, EffectDelay, EffectRetryableAfterSuccess}
	case PointClient:
		effects = []Effect{EffectReplyLostAfterApply, EffectDelay}
	}
	e := effects[c.rng.IntN(len(effects))]
	d := time.Duration(c.rng.Int64N(int64(90 * time.Second)))
	return Fault{Kind: "chaos-" + string(e), Effect: e, Duration: d}, true
}

func (c *chaos) SetupWorld(w *World) {
	w.At(3*time.Minute, func() { w.crashReplica(0) })
	w.At(4*time.Minute, func() { w.pauseReplica(1, 70*time.Second) })
}

func chaosWorld(seed uint64, keep bool) *World {
	return NewWorld(Config{System: cordum.System{}, Seed: seed, KeepTrace: keep, Injector: newChaos(seed, 0.02),
		ReplicaSkew: []time.Duration{0, 150 * time.Millisecond, -80 * time.Millisecond},
		Workload:    Workload{Jobs: 20, StatusReads: 10, CancelRate: 0.1, Topics: []string{"default", "gpu"}, Runs: 8}})
}

// Same seed, same code: same checksum and the same trace bytes, for many seeds,
// with three replicas, four workers and every fault point active. Different
// seeds diverge.
func TestDeterministic(t *testing.T) {
	seeds := longtest.Pick(20, 200)
	sums := map[uint64]uint64{}
	faults := 0
	for s := 1; s <= seeds; s++ {
		seed := uint64(s)
		w1, w2 := chaosWorld(seed, true), chaosWorld(seed, true)
		r1, r2 := w1.Run(), w2.Run()
		require.NoError(t, r1.Err, "seed %d", seed)
		require.NoError(t, r2.Err, "seed %d", seed)
		if r1.Checksum != r2.Checksum || !bytes.Equal(w1.Trace().Bytes(), w2.Trace().Bytes()) {
			t.Fatalf("seed %d diverged: checksums %016x vs %016x\n%s", seed, r1.Checksum, r2.Checksum,
				describeTraceDifference(w1.Trace().Bytes(), w2.Trace().Bytes()))
		}
		if prev, dup := sums[r1.Checksum]; dup {
			t.Fatalf("seeds %d and %d gave the same checksum %016x", prev, seed, r1.Checksum)
		}
		sums[r1.Checksum] = seed
		faults += len(r1.History.Faults)
	}
	require.Greater(t, faults, seeds, "the chaos injector fired")
}

// No goroutine outlives a run: actors, go-redis and miniredis all end with it.
func TestNoGoroutineLeaksAcrossSeeds(t *testing.T) {
	seeds := longtest.Pick(50, 1000)
	runtime.GC()
	base := runtime.NumGoroutine()
	for s := 1; s <= seeds; s++ {
		w := NewWorld(Config{System: cordum.System{}, Seed: uint64(s), Injector: newChaos(uint64(s), 0.02),
			Workload: Workload{Jobs: 3}, FaultPhase: 2 * time.Minute, Drain: time.Minute})
		require.NoError(t, w.Run().Err, "seed %d", s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), base+2, "goroutines before %d, after %d", base, runtime.NumGoroutine())
}

// describeTraceDifference names the first line on which two traces part.
func describeTraceDifference(a, b []byte) string {
	d, _ := kernel.FirstTraceDifference(a, b)
	return fmt.Sprintf("line %d:\n  %s\n  %s", d.Line, d.A, d.B)
}
