package faults

import "github.com/dispatchsim/dispatchsim/sim"

// ReplicaPauseBeyondLockTTL: a scheduler replica stops (a GC pause, a frozen
// VM) for longer than the engine's 60s job lock TTL while it holds a job lock:
// it fires at the engine's fenced transitions. Another replica may take the job
// over; the paused one's writes must then be fenced off.
var ReplicaPauseBeyondLockTTL = register(Kind{
	Name:        "ReplicaPauseBeyondLockTTL",
	Description: "a replica holding a job lock pauses for longer than the lock TTL",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectPause,
	Defaults:    KindOptions{Probability: 0.005, DurationMsMin: 61_000, DurationMsMax: 120_000},
	needs:       needJobLock,
	applies: func(p *sim.Point) bool {
		t, ok := transitionOf(p)
		return ok && isReplica(p.Group) && t.Token != ""
	},
	hint:  "a replica's transition write while it holds a job's lock (Observer.Command's Transition and Token); Spec.JobLock declares the lock",
	class: classReplicaPause,
})
