package faults

import "github.com/dispatchsim/dispatchsim/sim"

// DeliveryDuplicated: the broker hands one message to a consumer twice.
var DeliveryDuplicated = register(Kind{
	Name:        "DeliveryDuplicated",
	Description: "a message is delivered twice",
	Timing:      AtPoint,
	Point:       sim.PointDeliver,
	Effect:      sim.EffectDuplicate,
	Defaults:    KindOptions{Probability: 0.02},
	applies:     isJobTraffic,
})
