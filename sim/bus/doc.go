// Package bus is the simulated broker, shaped like a JetStream deployment and
// held to one by a differential test against an embedded nats-server:
// streams with a duplicate window each, durable queue consumers and fan-out
// consumers, acks, NAKs and terms settled by stream sequence (late ones
// included), NAK with delay, ack-wait redelivery ahead of new messages, max
// deliver and max ack pending. Every publish, delivery and ack is a yield
// point and a fault point, and every publish is recorded with what the broker
// did with it, the ground truth exactly-once publish is counted from.
//
// A system's handler settles a message by the sut.Settle value it returns; the
// bus never looks at a system's error types. It imports nothing of the
// simulator but the kernel, and no system.
package bus
