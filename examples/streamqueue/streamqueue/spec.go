package streamqueue

import (
	"github.com/dispatchsim/dispatchsim/examples/streamqueue/streams"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Spec is the dispatcher's promise. Its roles: a route enters DISPATCHED
// and counts an attempt (Scheduled and Dispatched are one state), every
// entry into QUEUED earns the next route a new generation (Retrying), and
// there is no running state: the work entry's visibility timeout (the
// lease, XAUTOCLAIM's min-idle) covers the execution, one for every topic,
// since a consumer group has one. A work entry goes to one consumer and is
// never delivered again: exactly once, with no consumer at the worker. The
// gateway writes cancels. It has no job lock, no tenant caps, no run
// admission and no requirement matching; it routes round robin over a
// topic's pools with a live worker, not by load.
func (System) Spec(o sut.Options) sut.Spec {
	s := sut.Spec{
		States: streams.States, Terminal: streams.TerminalStates,
		Transitions: streams.Transitions,
		Scheduled:   streams.Dispatched, Dispatched: streams.Dispatched, Retrying: streams.Queued, Running: "",
		Succeeded: streams.Succeeded, Failed: streams.Failed, TimedOut: streams.TimedOut, Cancelled: streams.Cancelled,
		DispatchTimeout:       streams.DefaultLease,
		ReconcileInterval:     streams.DefaultReapInterval,
		MaxSchedulingRetries:  streams.DefaultMaxAttempts,
		PickGrace:             streams.DefaultPickGrace,
		GraceReasons:          []string{streams.ReasonNoTopicPool, streams.ReasonNoWorkers},
		ReasonTopicMissing:    streams.ReasonNoTopicPool,
		RetryCapReason:        streams.ReasonMaxAttempts,
		ReasonWorkerFailed:    streams.ReasonWorkerFailed,
		ReasonDispatchTimeout: streams.ReasonDispatchTimeout,
		ReasonInvalidRequest:  streams.ReasonInvalidRequest,
		WorkerTTL:             streams.WorkerTTL,
		Cancels:               sut.CancelByGateway,
		// Submit leaves a stored job id as it is, and job hashes are kept.
		SubmitDedupWindow: sut.SubmitDedupForever,
		// The reaper claims a work entry its worker held past the lease and
		// puts the job back while the worker may still run it.
		RedispatchAfterLease: true,
		// Workers pull their dispatches from their pool's stream: nothing
		// dispatches over the bus.
		WorkersPull: true,
		Metrics: sut.Metrics{Branches: map[string]string{
			"streamqueue_result_ignored_total": "result_ignored",
			"streamqueue_requeued_total":       "requeued",
		}},
	}
	if o.DispatchTimeout > 0 {
		s.DispatchTimeout = o.DispatchTimeout
	}
	if o.ReconcileInterval > 0 {
		s.ReconcileInterval = o.ReconcileInterval
	}
	if o.MaxSchedulingRetries > 0 {
		s.MaxSchedulingRetries = o.MaxSchedulingRetries
	}
	return s
}
