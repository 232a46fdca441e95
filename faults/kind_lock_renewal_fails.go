package faults

import (
	"strings"

	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// LockRenewalFails: a background renewal of a job lock (one a timer runs
// while the section works) fails before it applies. One failure, or two in
// a row, must not make the section give its lock up; the system's limit in
// a row must.
var LockRenewalFails = register(Kind{
	Name:        "LockRenewalFails",
	Description: "a timer's renewal of a job lock fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.3},
	applies: func(p *sim.Point) bool {
		return isReplica(p.Group) && p.Fact.LockOp == sut.LockRenew && strings.Contains(p.Actor, "/timer#")
	},
	hint:  "a lock renewal on a timer that Observer.Command reports (LockKey, LockOp renew); Spec.JobLock declares the lock",
	needs: needJobLock,
})
