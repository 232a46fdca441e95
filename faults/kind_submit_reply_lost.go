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
	// Not drawn by the swarms yet: turned on in a pinned swarm seed, it
	// changes the run the seed was pinned for (world-swarm 502183 stopped
	// killing republish-outside-dedup-window). It joins them with those
	// seeds re-pinned; scenario submit-retries declares it meanwhile.
	swarmChance: -1,
})
