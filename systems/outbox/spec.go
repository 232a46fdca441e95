package outbox

import (
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/outbox/dispatch"
)

// Spec is the outbox's promise, where it differs from engine/'s: no job lock;
// SCHEDULED and DISPATCHED written by one script (observed as one move into
// DISPATCHED, which passed through SCHEDULED and counts an attempt); no
// DISPATCHED -> SCHEDULED rollback; dispatches published by a relay after the
// commit; no rollback or fail-closed counters; no run admission; no tenant
// caps. Like engine/, it fails a request without a topic as invalid, and a
// replica writes a client's cancel. Its delivery promise is at least once:
// the relay re-publishes an entry it is not sure went out, under the same
// message id, and the worker's store-backed consumer runs each dispatch id
// once.
func (System) Spec(o sut.Options) sut.Spec {
	st := func(s dispatch.JobState) string { return string(s) }
	s := sut.Spec{
		Transitions: map[string][]string{},
		Scheduled:   st(dispatch.StateScheduled), Dispatched: st(dispatch.StateDispatched),
		Retrying: st(dispatch.StateRetrying), Running: st(dispatch.StateRunning),
		Succeeded: st(dispatch.StateSucceeded), Cancelled: st(dispatch.StateCancelled),
		Failed: st(dispatch.StateFailed), TimedOut: st(dispatch.StateTimeout),
		CompoundSteps:        map[string]string{st(dispatch.StateDispatched): st(dispatch.StateScheduled)},
		DispatchTimeout:      dispatch.DefaultDispatchTimeout,
		ReconcileInterval:    dispatch.DefaultReconcileInterval,
		RetryCapReason:       string(dispatch.ReasonMaxSchedulingRetries),
		RunningTimeout:       dispatch.DefaultRunningTimeout,
		MaxSchedulingRetries: dispatch.DefaultMaxSchedulingRetries,
		ReasonTopicMissing:   string(dispatch.ReasonNoPoolMappingTopic),
		// A topic with no pool fails the job after the grace window, on the
		// first retry past it.
		PickGrace:            dispatch.DefaultNoPoolMappingGrace,
		GraceReasons:         []string{string(dispatch.ReasonNoPoolMappingTopic)},
		BackoffMax:           dispatch.DefaultBackoffMax,
		ReasonInvalidRequest: string(dispatch.ReasonInvalidRequest),
		PublishFromRelay:     true,
		// dispatch.Consumer keeps the ids it ran in the store.
		WorkersDedupDurably: true,
		WorkerGate:          sut.GateClaim,
		Cancels:             sut.CancelByReplica,
		Delivery:            sut.AtLeastOnceIdempotentConsumer,
		// A submit of a stored job leaves it alone, and the job hash is kept.
		SubmitDedupWindow: sut.SubmitDedupForever,
		DLQReasons: []string{string(dispatch.ReasonNoWorkers), string(dispatch.ReasonPoolOverloaded),
			string(dispatch.ReasonJobFailed), string(dispatch.ReasonUnknownResult), string(dispatch.ReasonDispatchTimeout),
			string(dispatch.ReasonRunningTimeout)},
		// Measured: about 1,975 replica writes for lock-expiry's 30 jobs
		// (seeds 5000-5002), most of them the relay's claims and marks.
		ReplicaWritesPerJob: 65,
		Metrics: sut.Metrics{Branches: map[string]string{
			"outbox_relay_publish_failed_total":   "relay_publish_failed",
			"outbox_relay_republished_total":      "relay_republished",
			"outbox_relay_mark_sent_failed_total": "mark_sent_failed",
			"outbox_entries_dropped_total":        "entry_dropped",
			"outbox_redelivery_skipped_total":     "redelivery",
			"outbox_result_ignored_total":         "result_ignored",
			"outbox_reconciler_timeout_total":     "reconciler_timeout",
			"outbox_consumer_duplicate_total":     "consumer_duplicate",
		}},
	}
	if o.DispatchTimeout != 0 {
		s.DispatchTimeout = o.DispatchTimeout
	}
	if o.RunningTimeout != 0 {
		s.RunningTimeout = o.RunningTimeout
	}
	if o.MaxSchedulingRetries != 0 {
		s.MaxSchedulingRetries = o.MaxSchedulingRetries
	}
	if o.ReconcileInterval != 0 {
		s.ReconcileInterval = o.ReconcileInterval
	}
	for _, f := range append([]dispatch.JobState{""}, dispatch.AllStates...) {
		if f != "" {
			s.States = append(s.States, st(f))
		}
		if f.Terminal() {
			s.Terminal = append(s.Terminal, st(f))
		}
		for _, t := range dispatch.AllStates {
			if dispatch.TransitionAllowed(f, t) {
				s.Transitions[st(f)] = append(s.Transitions[st(f)], st(t))
			}
		}
	}
	return s
}
