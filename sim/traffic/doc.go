// Package traffic is a world's workload: the gateway clients that submit
// jobs, read their status and cancel them, the run clients that start
// workflow runs with repeating idempotency keys, and the workflow engine and
// sweeper that complete runs and reclaim stale reservations. It plans them
// from the workload PRNG (or lets a driver start them one by one) and records
// every operation with its call and return times: the client side of the
// history that the linearizability checks read.
//
// It calls the system only through sut.Gateway and sut.Admission, and the
// world only through kernel.Env and the store: it imports no engine and no
// system (etcd's robustness tests keep their traffic apart the same way).
package traffic
