// Package live connects a world to a real NATS JetStream for a live run
// (simrun run --live): the bus a world's replicas, workers and clients
// publish to and consume from, recording what the simulated bus records
// (publishes and their outcome, each handler's settle) into the history.
//
// Deliveries arrive on the NATS client's goroutines; they are posted to the
// kernel, whose controller spawns each handler as an actor between steps,
// so the system under test still runs one actor at a time. Nothing here is
// deterministic, and nothing here runs in a simulation.
package live
