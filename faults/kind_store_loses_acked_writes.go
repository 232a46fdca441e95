package faults

import (
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

// StoreLosesAckedWrites: the store breaks its own contract. A failover to a
// replica that lagged by DurationMs forgets every write acknowledged in that
// span (Redis replication is asynchronous). Whatever follows on the jobs and
// keys it forgot is the environment's, not the system's: the checker
// attributes it, and the seed's verdict says so. Rarely in a swarm: it
// excuses what it touches.
const storeLossName = "StoreLosesAckedWrites"

var StoreLosesAckedWrites = register(Kind{
	Name:        storeLossName,
	Description: "a store failover loses the last writes it acknowledged",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 10, DurationMsMax: 2_000},
	draw:        drawStoreLoss,
	apply:       applyStoreLoss,
	swarmChance: 0.05,
})

func drawStoreLoss(_ *Injector, w *sim.World, ko KindOptions, rng *rand.Rand) []PlanEntry {
	happens := rng.Float64() < ko.Probability
	lost := drawMs(rng, max(ko.DurationMsMin, 1), max(ko.DurationMsMax, 1))
	// While clients submit, when writes are densest: a failover in a quiet
	// minute loses nothing.
	busy := min(w.Config().Workload.SubmitWindow, w.Config().FaultPhase)
	at := drawMs(rng, lost+1_000, max(ms(busy), lost+1_000))
	if !happens {
		return nil
	}
	return []PlanEntry{{Kind: storeLossName, Setup: true, StartMs: at, DurationMs: lost}}
}

func applyStoreLoss(_ *Injector, w *sim.World, e PlanEntry) {
	_ = w.Schedule(sim.Event{At: time.Duration(e.StartMs) * time.Millisecond, Action: sim.EventStoreLoss,
		For: time.Duration(e.DurationMs) * time.Millisecond}) // drawn valid: lost < at
}
