package faults

import "github.com/dispatchsim/dispatchsim/sim"

// StoreWriteFailsBeforeApply: a scheduler replica's store write fails before
// Redis sees it. Nothing is applied; the engine must treat the error as
// "not applied or unknown" and retry without losing the job.
var StoreWriteFailsBeforeApply = register(Kind{
	Name:        "StoreWriteFailsBeforeApply",
	Description: "a replica's store write (scripts included) fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.005},
	applies:     func(p *sim.Point) bool { return isReplica(p.Group) && p.Write },
})
