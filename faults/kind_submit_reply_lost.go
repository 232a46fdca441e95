package faults

import "github.com/dispatchsim/dispatchsim/sim"

// SubmitReplyLost: the gateway applied a client's submit, and the reply was
// lost on its way back (an HTTP response cut by a proxy, a client timeout):
// the client sees an error and sends the same submit again.
var SubmitReplyLost = register(Kind{
	Name:        "SubmitReplyLost",
	Description: "a submit the gateway applied loses its reply; the client retries it",
	Timing:      AtPoint,
	Point:       sim.PointClient,
	Effect:      sim.EffectReplyLostAfterApply,
	Defaults:    KindOptions{Probability: 0.1},
	applies:     func(p *sim.Point) bool { return p.Group == "clients" },
	swarmChance: notYetSwarmed,
})
