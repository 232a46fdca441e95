package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StoreReadsFailWritesWork: for a window drawn at setup, every store read of
// the replicas and the gateway fails while writes still work (a replica set
// whose read path is broken).
var StoreReadsFailWritesWork = register(Kind{
	Name:        "StoreReadsFailWritesWork",
	Description: "store reads fail while writes work, during a bounded window",
	Timing:      Window,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 5_000, DurationMsMax: 60_000},
	applies:     func(p *sim.Point) bool { return isStoreUser(p.Group) && !p.Write },
})
