// Package bus is the simulated broker, shaped like JetStream: subjects, queue
// groups (one delivery per queue), acks, NAK with delay, redelivery after the
// ack wait, a max-deliver limit and optional de-duplication by message id.
// Every publish, delivery and ack is a yield point and a fault point, and
// every publish is recorded with what the broker did with it, the ground
// truth exactly-once publish is counted from.
//
// A system's handler settles a message by the sut.Settle value it returns; the
// bus never looks at a system's error types. It imports nothing of the
// simulator but the kernel, and no system.
package bus
