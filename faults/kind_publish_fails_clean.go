package faults

import "github.com/dispatchsim/dispatchsim/sim"

// PublishFailsClean: a bus publish fails and the broker kept nothing (any
// publisher; worker heartbeats have their own kind).
var PublishFailsClean = register(Kind{
	Name:        "PublishFailsClean",
	Description: "a publish fails and the broker did not store the message",
	Timing:      AtPoint,
	Point:       sim.PointPublish,
	Effect:      sim.EffectFailClean,
	Defaults:    KindOptions{Probability: 0.03},
	applies:     isJobTraffic,
})
