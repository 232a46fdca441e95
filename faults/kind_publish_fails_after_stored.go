package faults

import "github.com/dispatchsim/dispatchsim/sim"

// PublishFailsAfterStored: the ambiguous publish: the broker stored the
// message, the publisher gets an error. A rollback then races a delivery.
var PublishFailsAfterStored = register(Kind{
	Name:        "PublishFailsAfterStored",
	Description: "a publish returns an error although the broker stored the message",
	Timing:      AtPoint,
	Point:       sim.PointPublish,
	Effect:      sim.EffectFailStored,
	Defaults:    KindOptions{Probability: 0.03},
	applies:     isJobTraffic,
})
