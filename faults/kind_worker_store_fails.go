package faults

import "github.com/dispatchsim/dispatchsim/sim"

// WorkerStoreFails: a worker's own store command (its idempotent consumer's
// read or claim before it runs a dispatch) fails before it is applied. The
// gate must fail closed: a dispatch it cannot check is not run, and comes
// back.
var WorkerStoreFails = register(Kind{
	Name:        "WorkerStoreFails",
	Description: "a worker's store command (its dispatch gate) fails before it is applied",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectFailBeforeApply,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) },
	hint:        "a worker's own store command before it runs a dispatch (its WorkerProtocol's IdempotentConsumer); Spec.WorkerGate declares the gate",
	needs:       needWorkerStore,
})

// WorkerStoreReplyLost: a worker's store write is applied and its reply
// lost: the gate claimed the dispatch but the worker cannot tell, and the
// redelivery meets its own claim.
var WorkerStoreReplyLost = register(Kind{
	Name:        "WorkerStoreReplyLost",
	Description: "a worker's store write (its dispatch gate's claim) is applied but its reply is lost",
	Timing:      AtPoint,
	Point:       sim.PointRedis,
	Effect:      sim.EffectReplyLostAfterApply,
	Defaults:    KindOptions{Probability: 0.05},
	applies:     func(p *sim.Point) bool { return isWorker(p.Group) && p.Write },
	hint:        "a worker's store write claiming a dispatch (its IdempotentConsumer); Spec.WorkerGate = GateClaim declares the claim",
	needs:       needWorkerClaim,
})
