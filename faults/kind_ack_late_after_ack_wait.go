package faults

import "github.com/dispatchsim/dispatchsim/sim"

// AckLateAfterAckWait: a handler's ack reaches the broker only after the ack
// wait (plus DurationMs): the message was redelivered meanwhile, maybe to
// another member, and the late ack settles it by its sequence while that
// member still works on it; the member's own NAK or ack then counts for
// nothing. Within the broker's contract: nothing is excused.
var AckLateAfterAckWait = register(Kind{
	Name:        "AckLateAfterAckWait",
	Description: "an ack arrives after the ack wait and settles a message another member now holds",
	Timing:      AtPoint,
	Point:       sim.PointAck,
	Effect:      sim.EffectAckLate,
	Defaults:    KindOptions{Probability: 0.01, DurationMsMin: 100, DurationMsMax: 5_000},
	applies:     isJobTraffic,
})
