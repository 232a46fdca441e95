package faults

import (
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

// BrokerLosesAckedPublishes: the broker crashes and comes back without the
// messages it stored in the last DurationMs, publishes it had acknowledged
// but not yet flushed (JetStream's default fsync runs every two minutes; a
// Jepsen analysis of NATS 2.12.1 lost acknowledged records this way). The
// environment breaks its contract: what depends on those messages arriving
// is excused on their jobs only, and the engine's own promises (its state
// machine, its locks, terminal states) still hold there.
const brokerLossName = "BrokerLosesAckedPublishes"

var BrokerLosesAckedPublishes = register(Kind{
	Name:        brokerLossName,
	Description: "a broker crash loses the last publishes it acknowledged",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 500, DurationMsMax: 10_000},
	draw:        drawSpanEvent(brokerLossName),
	apply:       applySpanEvent(sim.EventBrokerLoss),
	swarmChance: 0.05,
})

// drawSpanEvent draws one event that loses a span of the past (a store's
// writes, a broker's messages or acks), while clients submit: in a quiet
// minute there is nothing to lose.
func drawSpanEvent(kind string) func(*Injector, *sim.World, KindOptions, *rand.Rand) []PlanEntry {
	return func(_ *Injector, w *sim.World, ko KindOptions, rng *rand.Rand) []PlanEntry {
		happens := rng.Float64() < ko.Probability
		span := drawMs(rng, max(ko.DurationMsMin, 1), max(ko.DurationMsMax, 1))
		busy := min(w.Config().Workload.SubmitWindow, w.Config().FaultPhase)
		at := drawMs(rng, span+1_000, max(ms(busy), span+1_000))
		if !happens {
			return nil
		}
		return []PlanEntry{{Kind: kind, Setup: true, StartMs: at, DurationMs: span}}
	}
}

func applySpanEvent(action sim.EventAction) func(*Injector, *sim.World, PlanEntry) {
	return func(_ *Injector, w *sim.World, e PlanEntry) {
		_ = w.Schedule(sim.Event{At: time.Duration(e.StartMs) * time.Millisecond, Action: action,
			For: time.Duration(e.DurationMs) * time.Millisecond}) // drawn valid: span < at
	}
}
