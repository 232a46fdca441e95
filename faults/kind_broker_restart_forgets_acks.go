package faults

import "github.com/dispatchsim/dispatchsim/sim"

// BrokerRestartForgetsAcks: the broker restarts and forgets the acks it took
// in the last DurationMs; messages already handled and acked come back
// (nats-server redelivered acked messages during rolling restarts until PRs
// 5419 and 5482). Within the at-least-once contract: every handler must take
// a message it already handled again, and nothing is excused.
const brokerRestartName = "BrokerRestartForgetsAcks"

var BrokerRestartForgetsAcks = register(Kind{
	Name:        brokerRestartName,
	Description: "a broker restart forgets recent acks and redelivers those messages",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 1_000, DurationMsMax: 20_000},
	draw:        drawSpanEvent(brokerRestartName),
	apply:       applySpanEvent(sim.EventBrokerRestart),
	swarmChance: 0.1,
})
