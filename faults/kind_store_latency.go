package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StoreLatency: a store command by a replica, the gateway or a worker is slow (the
// actor sleeps in virtual time before the command runs).
var StoreLatency = register(Kind{
	Name:        "StoreLatency",
	Description: "a store command by a replica, the gateway or a worker is delayed",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectDelay,
	Defaults:    KindOptions{Probability: 0.01, DurationMsMin: 1, DurationMsMax: 500},
	applies:     func(p *sim.Point) bool { return isStoreUser(p.Group) || isWorker(p.Group) },
})
