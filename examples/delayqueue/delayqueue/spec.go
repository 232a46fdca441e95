package delayqueue

import (
	"time"

	"github.com/dispatchsim/dispatchsim/examples/delayqueue/queue"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Spec is the queue's promise. Its roles: a claim enters DISPATCHED and
// counts an attempt (Scheduled and Dispatched are one state), every entry
// into QUEUED earns the next claim a new generation (Retrying), and there is
// no running state: the lease (the dispatch timeout) covers the execution.
// The gateway writes cancels, and a dispatch whose lease ran out is claimed
// again while its worker may still run it. It has no job lock, no tenant caps, no run
// admission, no DLQ announcement and no requirement matching; it places jobs
// round robin, not by load.
func (System) Spec(o sut.Options) sut.Spec {
	s := sut.Spec{
		States: queue.States, Terminal: queue.TerminalStates,
		Transitions: queue.Transitions,
		Scheduled:   queue.Dispatched, Dispatched: queue.Dispatched, Retrying: queue.Queued, Running: "",
		Succeeded: queue.Succeeded, Failed: queue.Failed, TimedOut: queue.TimedOut, Cancelled: queue.Cancelled,
		DispatchTimeout:       queue.DefaultLease,
		ReconcileInterval:     queue.DefaultReapInterval,
		MaxSchedulingRetries:  queue.DefaultMaxAttempts,
		PickGrace:             queue.DefaultPickGrace,
		GraceReasons:          []string{queue.ReasonNoTopicPool, queue.ReasonNoWorkers},
		ReasonTopicMissing:    queue.ReasonNoTopicPool,
		RetryCapReason:        queue.ReasonMaxAttempts,
		ReasonWorkerFailed:    queue.ReasonWorkerFailed,
		ReasonDispatchTimeout: queue.ReasonDispatchTimeout,
		ReasonInvalidRequest:  queue.ReasonInvalidRequest,
		WorkerTTL:             queue.WorkerTTL,
		JobLock:               false,
		Requires:              false,
		LeastLoaded:           false,
		RunAdmission:          false,
		// The gateway writes a cancel itself; no replica ever does.
		Cancels: sut.CancelByGateway,
		// Submit leaves a stored job id as it is, and job hashes are kept:
		// a retried submit never makes the job again.
		SubmitDedupWindow: sut.SubmitDedupForever,
		// The reaper puts a dispatch whose lease ran out back in the queue
		// while its worker may still run it: a visibility timeout.
		RedispatchAfterLease: true,
		Metrics: sut.Metrics{Published: "delayqueue_dispatch_published_total", Branches: map[string]string{
			"delayqueue_result_ignored_total": "result_ignored",
			"delayqueue_requeued_total":       "requeued",
		}},
	}
	if o.DispatchTimeout > 0 {
		s.DispatchTimeout = o.DispatchTimeout
	}
	for topic, d := range o.DispatchTimeoutByTopic {
		if d > 0 { // zero or less: the global lease
			if s.DispatchTimeoutByTopic == nil {
				s.DispatchTimeoutByTopic = map[string]time.Duration{}
			}
			s.DispatchTimeoutByTopic[topic] = d
		}
	}
	if o.ReconcileInterval > 0 {
		s.ReconcileInterval = o.ReconcileInterval
	}
	if o.MaxSchedulingRetries > 0 {
		s.MaxSchedulingRetries = o.MaxSchedulingRetries
	}
	return s
}
