// Package workers holds a world's simulated workers. Each consumes its direct
// subject through the system's worker protocol, acks on receipt, runs the job
// as an actor of its own (an execution: the side effect exactly-once counts),
// reports the result, heartbeats its load, and crashes and restarts as a
// process. Worker faults (crash mid-job, duplicate, late or retryable-after-
// success results) fire at its fault point. A worker whose protocol pulls
// (sut.Puller) subscribes to nothing: a pull loop of its own takes work from
// the store while it has room, each pulled dispatch runs as a delivered one
// does, and it is acknowledged through the pull once its result is sent.
//
// It sees the system only through sut.WorkerProtocol (and its optional
// idempotent consumer and pull), and the world only through kernel.Env, the bus and
// the store: it imports no engine and no system.
package workers
