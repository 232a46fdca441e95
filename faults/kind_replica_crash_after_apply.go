package faults

import "github.com/dispatchsim/dispatchsim/sim"

// ReplicaCrashAfterApply: a scheduler replica crashes right after a store
// write was applied, before it sees the reply.
var ReplicaCrashAfterApply = register(Kind{
	Name:        "ReplicaCrashAfterApply",
	Description: "a replica crashes right after a store write is applied, and restarts later",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectCrashAfterApply,
	Defaults:    KindOptions{Probability: 0.001},
	applies:     func(p *sim.Point) bool { return isReplica(p.Group) && p.Write },
	hint:        "a replica's store write (scripts count), at a rate per write that Spec.ReplicaWritesPerJob scales up for a system that writes less than Cordum's engine",
	class:       classReplicaCrash,
	perWrite:    true,
})
