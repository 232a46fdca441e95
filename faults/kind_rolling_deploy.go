package faults

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

// deployDrain is how long a stopping replica gets to finish what it holds:
// Kubernetes' default termination grace period.
const (
	deployDrain       = 30 * time.Second
	rollingDeployName = "RollingDeploy"
)

// RollingDeploy: every replica in turn is stopped gracefully (no more
// deliveries, 30 s to drain), stays down for DurationMs (the new version
// starting) and comes back; the next one stops once it is back. A deploy
// during faults: locks released by nobody, messages left unacked at the
// drain's end, a reconciler that changes hands.
var RollingDeploy = register(Kind{
	Name:        rollingDeployName,
	Description: "every replica in turn is stopped with a drain and started again",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 35_000, DurationMsMax: 60_000},
	draw:        drawRollingDeploy,
	apply:       applyRollingDeploy,
	swarmChance: 0.2,
})

func drawRollingDeploy(_ *Injector, w *sim.World, ko KindOptions, rng *rand.Rand) []PlanEntry {
	happens := rng.Float64() < ko.Probability
	at := drawMs(rng, 0, ms(w.Config().FaultPhase)/2)
	var out []PlanEntry
	for i := range w.Replicas() {
		down := drawMs(rng, max(ko.DurationMsMin, ms(deployDrain)), max(ko.DurationMsMax, ms(deployDrain)))
		out = append(out, PlanEntry{Kind: rollingDeployName, Setup: true, Group: fmt.Sprintf("replica-%d", i+1),
			StartMs: at, DurationMs: down})
		at += down + drawMs(rng, 5_000, 20_000)
	}
	if !happens {
		return nil
	}
	return out
}

// applyRollingDeploy stages one replica's stop and start.
func applyRollingDeploy(_ *Injector, w *sim.World, e PlanEntry) {
	n, err := strconv.Atoi(strings.TrimPrefix(e.Group, "replica-"))
	if err != nil {
		return // a plan from a world with other replicas: nothing to deploy
	}
	at := time.Duration(e.StartMs) * time.Millisecond
	for _, ev := range []sim.Event{
		{At: at, Action: sim.EventStop, Replica: n, For: deployDrain},
		{At: at + time.Duration(e.DurationMs)*time.Millisecond, Action: sim.EventStart, Replica: n},
	} {
		if err := w.Schedule(ev); err != nil {
			return // a replica this world does not have (a shrunk or foreign plan)
		}
	}
}
