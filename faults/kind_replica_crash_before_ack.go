package faults

import "github.com/dispatchsim/dispatchsim/sim"

// ReplicaCrashBeforeAck: a scheduler replica crashes after a handler finished,
// before its ack: the message comes back after the ack wait, to a replica that
// must recognise work already done.
var ReplicaCrashBeforeAck = register(Kind{
	Name:        "ReplicaCrashBeforeAck",
	Description: "a replica crashes after handling a message, before the ack, and restarts later",
	Timing:      AtPoint,
	Point:       sim.PointAck,
	Effect:      sim.EffectCrash,
	Defaults:    KindOptions{Probability: 0.005},
	applies:     func(p *sim.Point) bool { return isReplica(p.Group) && isJobTraffic(p) },
	class:       classReplicaCrash,
})
