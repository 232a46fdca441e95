// Package outbox adapts systems/outbox/dispatch, the transactional-outbox
// dispatcher, to the simulator's boundary (sut). Its spec states where its
// promises differ from engine/'s: no job lock, SCHEDULED and DISPATCHED
// written in one script, dispatches published later by a relay, and an
// idempotent consumer at the worker.
//
// It must never import the simulator or engine/.
package outbox
