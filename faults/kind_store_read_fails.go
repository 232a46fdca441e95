package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StoreReadFails: a store read by a replica or the gateway fails. The engine
// must fail closed (seed runbook: fail-closed state read), never treat an
// unreadable job as a missing one.
var StoreReadFails = register(Kind{
	Name:        "StoreReadFails",
	Description: "a store read by a replica or the gateway fails",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.005},
	applies:     func(p *sim.Point) bool { return isStoreUser(p.Group) && !p.Write },
})
