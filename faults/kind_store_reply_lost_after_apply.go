package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StoreReplyLostAfterApply: a scheduler replica's store write is applied and
// its reply lost: the engine sees an error for a write that happened.
var StoreReplyLostAfterApply = register(Kind{
	Name:        "StoreReplyLostAfterApply",
	Description: "a replica's store write is applied but its reply is lost",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectReplyLostAfterApply,
	Defaults:    KindOptions{Probability: 0.005},
	applies:     func(p *sim.Point) bool { return isReplica(p.Group) && p.Write },
})
