package faults

import "github.com/dispatchsim/dispatchsim/sim"

// PublishLatency: a bus publish is slow (the publisher sleeps in virtual time
// before the broker stores the message).
var PublishLatency = register(Kind{
	Name:        "PublishLatency",
	Description: "a publish is delayed before the broker stores it",
	Timing:      AtPoint,
	Point:       sim.PointPublish,
	Effect:      sim.EffectDelay,
	Defaults:    KindOptions{Probability: 0.03, DurationMsMin: 10, DurationMsMax: 5_000},
	applies:     isJobTraffic,
})
