package faults

import "github.com/dispatchsim/dispatchsim/sim"

// AckLost: a handler finished but its ack never reaches the broker, which
// redelivers the message after the ack wait.
var AckLost = register(Kind{
	Name:        "AckLost",
	Description: "an ack is lost; the message comes back after the ack wait",
	Timing:      AtPoint,
	Point:       sim.PointAck,
	Effect:      sim.EffectAckLost,
	Defaults:    KindOptions{Probability: 0.01},
	applies:     isJobTraffic,
})
