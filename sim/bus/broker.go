package bus

import "github.com/dispatchsim/dispatchsim/sut"

// Broker is what a world needs of its bus: the simulated Bus, or in a live
// run a real JetStream (sim/live). The broker's own failures (Lose,
// ForgetSettles) are the simulated Bus's alone.
type Broker interface {
	// Publisher returns the bus port a group publishes through.
	Publisher(group string) sut.Bus
	// SubscribeHandler adds a member of group to the consumer of (queue,
	// subject); queue "" is a fan-out subscriber.
	SubscribeHandler(subject, queue, group string, h sut.Handler)
	// Unsubscribe removes a group's subscriptions (before it resubscribes).
	Unsubscribe(group string)
	// StopDeliveries hands a group's subscriptions nothing more (a drain).
	StopDeliveries(group string)
	// Unsettled lists the deliveries handlers hold, by actor name.
	Unsettled() []InFlight
}

var _ Broker = (*Bus)(nil)
