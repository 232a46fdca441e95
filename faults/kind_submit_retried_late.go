package faults

import "github.com/dispatchsim/dispatchsim/sim"

// SubmitRetriedLate: a client sends a submit that already landed once more,
// seconds to minutes later (a job runner re-driving a request whose response
// it never logged, a user pressing submit again). The retry comes inside the
// de-duplication window the system promises (the clients cut the drawn
// delay to it), so it must never make a second job.
var SubmitRetriedLate = register(Kind{
	Name:        "SubmitRetriedLate",
	Description: "a client sends a landed submit again, seconds to minutes later, inside the promised de-duplication window",
	Timing:      AtPoint,
	Point:       sim.PointClient,
	Effect:      sim.EffectDelay,
	Defaults:    KindOptions{Probability: 0.1, DurationMsMin: 2_000, DurationMsMax: 600_000},
	applies:     func(p *sim.Point) bool { return p.Group == "clients" },
	swarmChance: notYetSwarmed,
	hint:        "a client's submit the gateway applied (Gateway.Submit returning nil), in a system that declares Spec.SubmitDedupWindow",
	needs:       needSubmitDedup,
})
