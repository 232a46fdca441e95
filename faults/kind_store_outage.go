package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StoreOutage: for a window drawn at setup, every store command of every
// replica, the gateway and the workers fails before it is applied. The budget bounds the
// window (Budget.WindowMsMax), so the outage always ends.
var StoreOutage = register(Kind{
	Name:        "StoreOutage",
	Description: "every store command fails during a bounded window",
	Timing:      Window,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 5_000, DurationMsMax: 30_000},
	applies:     func(p *sim.Point) bool { return isStoreUser(p.Group) || isWorker(p.Group) },
})
