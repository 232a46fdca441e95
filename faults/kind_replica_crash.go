package faults

import "github.com/dispatchsim/dispatchsim/sim"

// ReplicaCrash: a scheduler replica crashes at a store command, before it is
// sent: its in-flight messages are not acked and come back after the ack wait.
// The replica restarts after sim.Config.ReplicaRestartAfter.
var ReplicaCrash = register(Kind{
	Name:        "ReplicaCrash",
	Description: "a replica crashes at a store command (not applied) and restarts later",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectCrash,
	Defaults:    KindOptions{Probability: 0.001},
	applies:     func(p *sim.Point) bool { return isReplica(p.Group) },
	class:       classReplicaCrash,
	perWrite:    true,
})
