package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StatusReadFails: a store read by the gateway (a client's status read, an
// admission read) fails. The client must be told it failed, never shown a
// state the job is not in (a missing job for an unreadable one).
var StatusReadFails = register(Kind{
	Name:        "StatusReadFails",
	Description: "a gateway's store read (a client's status read) fails",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.1},
	applies:     func(p *sim.Point) bool { return isGateway(p.Group) && !p.Write },
})
