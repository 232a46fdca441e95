package faults

import "github.com/dispatchsim/dispatchsim/sim"

// DeliveryDelayed: the broker holds a delivery back, so messages overtake
// each other (delay and reorder).
var DeliveryDelayed = register(Kind{
	Name:        "DeliveryDelayed",
	Description: "a delivery is held back, reordering messages",
	Timing:      AtPoint,
	Point:       sim.PointDeliver,
	Effect:      sim.EffectDelay,
	Defaults:    KindOptions{Probability: 0.02, DurationMsMin: 1_000, DurationMsMax: 60_000},
	applies:     isJobTraffic,
})
