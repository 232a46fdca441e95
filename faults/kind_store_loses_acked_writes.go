package faults

import "github.com/dispatchsim/dispatchsim/sim"

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
	draw:        drawSpanEvent(storeLossName),
	apply:       applySpanEvent(sim.EventStoreLoss),
	swarmChance: 0.05,
})
