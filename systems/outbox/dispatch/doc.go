// Package dispatch is a job dispatcher for AI-agent jobs on Redis and a
// message bus, built on the transactional outbox: the request handler writes a
// job's DISPATCHED state and the dispatch message it owes the bus in one Redis
// script, and a relay publishes outbox entries and marks them sent in a
// second script. Delivery is at least once; each message carries a stable id
// for the broker's de-duplication window, and Consumer lets a worker execute
// a dispatch id once.
//
// It is the alternative to engine/'s state-before-publish with rollback, kept
// as a separate design so both can be tested by the same simulator.
//
// The package never publishes from a handler (only the relay publishes),
// never writes a state outside the compare-and-transition scripts, never
// reads the wall clock, never draws global randomness and never starts a
// goroutine: time, randomness, the store client, the bus and metrics are
// ports (ports.go), so a simulator can run it deterministically. A time one
// replica stamps and another judges is never a replica's: the scripts stamp
// with the store's TIME and the sweeps read it, whatever the clocks say.
package dispatch
