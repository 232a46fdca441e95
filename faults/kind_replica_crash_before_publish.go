package faults

import "github.com/dispatchsim/dispatchsim/sim"

// ReplicaCrashBeforePublish: a scheduler replica crashes at a publish, before
// the broker sees it: for a dispatch, the job is DISPATCHED with nothing sent.
var ReplicaCrashBeforePublish = register(Kind{
	Name:        "ReplicaCrashBeforePublish",
	Description: "a replica crashes just before a publish, and restarts later",
	Timing:      AtPoint,
	Point:       sim.PointPublish,
	Effect:      sim.EffectCrash,
	Defaults:    KindOptions{Probability: 0.01},
	applies:     func(p *sim.Point) bool { return isReplica(p.Group) && isJobTraffic(p) },
	needs:       needReplicaPublishes,
	class:       classReplicaCrash,
})
