package cordum

import (
	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Spec is the engine's promise: states and transitions from engine/states.go,
// one job lock, the dispatch published by the handler that wrote DISPATCHED
// (rolled back on a failed publish).
func (System) Spec(o sut.Options) sut.Spec {
	s := sut.Spec{
		Transitions: map[string][]string{},
		Scheduled:   string(engine.StateScheduled), Dispatched: string(engine.StateDispatched),
		Retrying: string(engine.StateRetrying), Succeeded: string(engine.StateSucceeded),
		Cancelled: string(engine.StateCancelled), Failed: string(engine.StateFailed),
		TimedOut:          string(engine.StateTimeout),
		DispatchTimeout:   engine.DefaultDispatchTimeout,
		ReconcileInterval: engine.DefaultReconcileInterval,
		JobLock:           true,
		Metrics: sut.Metrics{Rollbacks: "scheduler_dispatch_rollback_total",
			RollbackFailures: "scheduler_dispatch_rollback_failure_total",
			FailClosedReads:  "scheduler_state_read_fail_closed_total",
			Published:        "scheduler_dispatch_published_total"},
	}
	if o.DispatchTimeout != 0 {
		s.DispatchTimeout = o.DispatchTimeout
	}
	if o.ReconcileInterval != 0 {
		s.ReconcileInterval = o.ReconcileInterval
	}
	from := append([]engine.JobState{""}, engine.AllStates...)
	for _, f := range from {
		if f != "" {
			s.States = append(s.States, string(f))
		}
		if f.Terminal() {
			s.Terminal = append(s.Terminal, string(f))
		}
		for _, t := range engine.AllStates {
			if engine.TransitionAllowed(f, t) {
				s.Transitions[string(f)] = append(s.Transitions[string(f)], string(t))
			}
		}
	}
	return s
}
