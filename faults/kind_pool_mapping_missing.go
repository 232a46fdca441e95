package faults

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

const (
	poolMappingMissingName       = "PoolMappingMissing"
	poolMappingMissingStaticName = "PoolMappingMissingStatic"
)

// PoolMappingMissing: the race that heals: a topic's pool mapping is missing
// when the run starts (jobs for it are published before the config rollout) and
// arrives after a drawn delay (DurationMs), by default on both sides of the
// engine's 30s no-pool-mapping grace window.
var PoolMappingMissing = register(Kind{
	Name:        poolMappingMissingName,
	Description: "a topic's pool mapping is missing at start and arrives after a delay",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 5_000, DurationMsMax: 60_000},
	draw:        drawPoolMappingMissing(false),
	apply:       applyPoolMappingMissing,
})

// PoolMappingMissingStatic: a static misconfiguration: a topic never gets a
// pool mapping. Its jobs must fail with reason no_pool_mapping, not hide behind
// max_scheduling_retries. Swarm turns it on rarely, since it fails every job
// of the topic.
var PoolMappingMissingStatic = register(Kind{
	Name:        poolMappingMissingStaticName,
	Description: "a topic never gets a pool mapping (static misconfiguration)",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1},
	draw:        drawPoolMappingMissing(true),
	apply:       applyPoolMappingMissing,
	swarmChance: 0.1,
})

// routedTopics are the workload's topics that have a mapping, sorted.
func routedTopics(w *sim.World) []string {
	cfg := w.Config()
	seen := map[string]bool{}
	var out []string
	for _, t := range cfg.Workload.Topics {
		if _, mapped := cfg.Options.Routing.Topics[t]; mapped && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// staticTopic is the topic the static variant removes, "" when it is off or
// has none. Both variants compute it, so the healing one can avoid it whatever
// the order of drawing.
func staticTopic(in *Injector, w *sim.World) string {
	ko, on := in.opts.Kinds[poolMappingMissingStaticName]
	topics := routedTopics(w)
	if !on || len(topics) == 0 {
		return ""
	}
	rng := kindRand(in.seed, poolMappingMissingStaticName)
	happens := rng.Float64() < ko.Probability
	topic := topics[rng.IntN(len(topics))]
	if !happens {
		return ""
	}
	return topic
}

func drawPoolMappingMissing(static bool) func(*Injector, *sim.World, KindOptions, *rand.Rand) []PlanEntry {
	return func(in *Injector, w *sim.World, ko KindOptions, rng *rand.Rand) []PlanEntry {
		if static {
			if t := staticTopic(in, w); t != "" {
				return []PlanEntry{{Kind: poolMappingMissingStaticName, Setup: true, Target: t}}
			}
			return nil
		}
		taken := staticTopic(in, w)
		var topics []string
		for _, t := range routedTopics(w) {
			if t != taken {
				topics = append(topics, t)
			}
		}
		happens := rng.Float64() < ko.Probability
		delay := drawMs(rng, max(ko.DurationMsMin, 1), max(ko.DurationMsMax, 1))
		if !happens || len(topics) == 0 {
			return nil
		}
		topic := topics[rng.IntN(len(topics))]
		return []PlanEntry{{Kind: poolMappingMissingName, Setup: true, Target: topic, DurationMs: delay}}
	}
}

// applyPoolMappingMissing removes the topic's mapping now (before any replica
// starts) and, for the healing variant, puts it back after DurationMs.
func applyPoolMappingMissing(_ *Injector, w *sim.World, e PlanEntry) {
	cur := w.Config().Options.Routing
	pools, mapped := cur.Topics[e.Target]
	if !mapped {
		return
	}
	missing := cur
	missing.Topics = make(map[string][]string, len(cur.Topics))
	for t, p := range cur.Topics {
		if t != e.Target {
			missing.Topics[t] = p
		}
	}
	w.SetRouting(missing)
	if e.DurationMs <= 0 {
		return
	}
	pools = append([]string(nil), pools...)
	w.At(time.Duration(e.DurationMs)*time.Millisecond, func() {
		healed := w.Config().Options.Routing
		healed.Topics = make(map[string][]string, len(healed.Topics)+1)
		for t, p := range w.Config().Options.Routing.Topics {
			healed.Topics[t] = p
		}
		healed.Topics[e.Target] = pools
		w.SetRouting(healed)
	})
}
