package faults

import "github.com/dispatchsim/dispatchsim/sim"

// AdmissionWriteFailsBeforeApply: a run-admission store write of the gateway
// (a reservation, a run creation, a cleanup, a takeover) fails before Redis
// sees it. A failed cleanup is the residual risk seed 002 admits: the
// reservation stays until a retry or the sweeper finds it stale.
var AdmissionWriteFailsBeforeApply = register(Kind{
	Name:        "AdmissionWriteFailsBeforeApply",
	Description: "a gateway run-admission write (reserve, create, cleanup) fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.1},
	needs:       needAdmission,
	applies: func(p *sim.Point) bool {
		return p.Group == "gateway" && p.Write && p.Fact.Admission
	},
	hint: "a run admission write of the gateway (Observer.Command's Admission); Spec.RunAdmission declares admission",
})
