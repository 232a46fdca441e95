package scenarios

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// The world swarm's topics: "default", "gpu" and "batch" are mapped; jobs on
// "special" require a capability no pool offers, and "orphan" has no pool.
const (
	topicSpecial = "special"
	topicOrphan  = "orphan"
)

// drawWorld draws a seed's whole world as data (TigerBeetle's options_swarm):
// topology, workload, broker and engine options. Every draw is labelled by
// the child seed it comes from, and every option lands in sim.Config, which
// a verbose run prints before the seed.
func drawWorld(seed uint64, base World) (World, checker.Spec) {
	tree := sim.SeedTree{Root: seed}
	rng := tree.Child("world")
	between := func(r *rand.Rand, lo, hi time.Duration) time.Duration {
		return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
	}
	w := base
	w.Replicas = 1 + rng.IntN(5)

	// Topology: some pools sometimes have no live worker.
	w.WorkerSpecs = nil
	pools := map[string]int{"general": 1 + rng.IntN(3), "gpu-pool": rng.IntN(2), "batch": rng.IntN(3)}
	for _, pool := range []string{"general", "gpu-pool", "batch"} {
		for i := range pools[pool] {
			w.WorkerSpecs = append(w.WorkerSpecs, sim.WorkerSpec{ID: fmt.Sprintf("%s-%d", pool, i+1), Pool: pool,
				MaxParallel: 1 + rng.IntN(4)})
		}
	}
	w.Options.Routing = sut.Routing{
		Topics: map[string][]string{"default": {"general"}, "gpu": {"gpu-pool"}, "batch": {"batch"},
			topicSpecial: {"general"}},
		Pools: map[string][]string{"general": nil, "gpu-pool": {"gpu"}, "batch": nil},
	}

	// Workload: jobs the routing can never place, sometimes.
	wl := sim.Workload{Jobs: 20 + rng.IntN(21), StatusReads: 20, CancelRate: 0.05, Runs: 8, RunLimit: 2,
		Topics:   []string{"default", "default", "gpu"},
		Requires: map[string][]string{"gpu": {"gpu"}, topicSpecial: {"ssd"}}}
	if base.Workload != nil {
		wl.Runs, wl.RunLimit = base.Workload.Runs, base.Workload.RunLimit
	}
	for _, t := range []string{"batch", topicSpecial, topicOrphan} {
		if rng.Float64() < 0.3 {
			wl.Topics = append(wl.Topics, t)
		}
	}
	w.Workload = &wl

	// Workers: job durations sometimes beyond the replayer's 60s threshold.
	prof := sim.WorkerProfile{JobDurationMin: time.Second, JobDurationMax: between(rng, 5*time.Second, 20*time.Second)}
	if rng.Float64() < 0.3 {
		prof.JobDurationMax = between(rng, 60*time.Second, 150*time.Second)
	}
	w.Workers = &prof

	// Broker: de-duplication on or off, its window, ack wait, max deliver
	// from 100: the engine NAKs a request every second while the store fails,
	// so a window of failed reads longer than max deliver seconds drops the
	// request at the broker (seen with 20-100; a NAK backoff by delivery
	// count needs the delivery number in the engine's port).
	bus := sim.BusConfig{Dedup: rng.Float64() < 0.75, DedupWindow: between(rng, 10*time.Second, 5*time.Minute),
		AckWait: between(rng, 30*time.Second, 10*time.Minute), MaxDeliver: 100 + rng.IntN(201)}
	w.Bus = &bus
	w.NoBrokerDedup = !bus.Dedup

	// Per-replica clock skew up to two minutes either way. Then the engine:
	// its re-publish window, retry cap, timeouts, lock TTL.
	w.ReplicaSkew = make([]time.Duration, w.Replicas)
	for i := range w.ReplicaSkew {
		w.ReplicaSkew[i] = between(rng, -2*time.Minute, 2*time.Minute)
	}
	if bus.Dedup {
		w.Options.DedupWindow = engineDedupWindow(bus.DedupWindow, w.ReplicaSkew, 50+rng.IntN(40))
	}
	if rng.Float64() < 0.5 || pools["batch"] == 0 || pools["gpu-pool"] == 0 {
		// A pool without workers retries to the cap: a low cap keeps it inside the heal bound.
		w.Options.MaxSchedulingRetries = 3 + rng.IntN(8)
	}
	if rng.Float64() < 0.3 {
		w.Options.DispatchTimeout = between(rng, 20*time.Second, 90*time.Second)
		w.Options.RunningTimeout = between(rng, 60*time.Second, 5*time.Minute)
		w.Options.ReconcileInterval = 5 * time.Second
	}
	w.Options.LockTTL = between(rng, 10*time.Second, 60*time.Second)

	// The broker's deployment, drawn last so the draws above stay as they
	// were: the system's declared streams, one stream for every subject, or
	// a stream per subject (a duplicate window per subject: a system that
	// re-publishes a message id on another subject is caught relying on one
	// window for them all); and sometimes a small max ack pending.
	switch r := rng.Float64(); {
	case r < 0.15:
		bus.Streams = sim.AllSubjects
	case r < 0.4:
		bus.SplitStreams = true
	}
	if rng.Float64() < 0.25 {
		bus.MaxAckPending = 4 + rng.IntN(61)
	}

	// What the checkers hold the world to: exactly-once only where a
	// de-duplication layer covers a re-dispatch after an ambiguous publish.
	spec := checker.Spec{ExactlyOnceUncovered: !bus.Dedup}
	return w, spec
}

// drawScheduling draws a seed's scheduling strategy as world data, from a
// stream of its own so no other draw shifts: the uniform pick half the time,
// else PCT of depth 1 to 3. Asked for by --strategy swarm only: the release
// suite's seeds keep the uniform pick and their checksums.
func drawScheduling(seed uint64) sim.Scheduling {
	rng := sim.SeedTree{Root: seed}.Child("world-scheduling")
	if rng.IntN(2) == 0 {
		return sim.Scheduling{}
	}
	return sim.Scheduling{Strategy: "pct", Depth: 1 + rng.IntN(3)}
}

// maxPublishLatency is the longest delay the PublishLatency fault puts
// between the engine's window check and the broker storing the copy.
const maxPublishLatency = 5 * time.Second

// engineDedupWindow is the re-publish window an operator following
// docs/how-it-works.md would configure: the engine measures it on replica clocks (the first
// attempt on one replica's, the re-publish on another's), so it must sit below
// the broker's window by the widest skew between replicas plus the publish
// latency; pct (50-89) of that. World-swarm seed 2003699 drew a window the
// skew alone outran: the re-publish came 28.8 s after the stored copy, past
// the broker's 24.4 s. Where nothing is left, the engine re-publishes nothing
// after an ambiguous publish (1 ms): the job waits for the first copy's
// result or times out.
func engineDedupWindow(broker time.Duration, skew []time.Duration, pct int) time.Duration {
	spread := slices.Max(skew) - slices.Min(skew)
	room := broker - spread - maxPublishLatency
	if room <= 0 {
		return time.Millisecond
	}
	return max(room*time.Duration(pct)/100, time.Millisecond)
}
