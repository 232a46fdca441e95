package engine

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// schedulerMetrics are the scheduler's counters. They are registered on the
// Registerer handed in, never on the global registry, so several replicas can
// live in one process (the simulator runs three).
type schedulerMetrics struct {
	rollback        *prometheus.CounterVec // scheduler_dispatch_rollback_total{topic}
	rollbackFailure *prometheus.CounterVec // scheduler_dispatch_rollback_failure_total{topic}
	failClosed      *prometheus.CounterVec // scheduler_state_read_fail_closed_total{topic}
	retry           *prometheus.CounterVec // scheduler_retry_total{phase}
	dlq             *prometheus.CounterVec // scheduler_dlq_total{reason_code}
	published       *prometheus.CounterVec // scheduler_dispatch_published_total{topic}
	redeliverySkip  *prometheus.CounterVec // scheduler_redelivery_skipped_total{state}
	lockFenced      prometheus.Counter     // scheduler_lock_fenced_total
	unknownWrite    *prometheus.CounterVec // scheduler_unknown_write_total{outcome}
	resultIgnored   *prometheus.CounterVec // scheduler_result_ignored_total{reason}
	timeouts        *prometheus.CounterVec // scheduler_reconciler_timeout_total{from}
	// republishWithheld: scheduler_republish_withheld_total{topic}
	republishWithheld *prometheus.CounterVec
	publishWithheld   *prometheus.CounterVec // scheduler_publish_withheld_total{cause}
}

func newSchedulerMetrics(reg prometheus.Registerer) (*schedulerMetrics, error) {
	m := &schedulerMetrics{
		rollback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_dispatch_rollback_total",
			Help: "Publishes that failed after DISPATCHED was written, each followed by a rollback attempt.",
		}, []string{"topic"}),
		rollbackFailure: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_dispatch_rollback_failure_total",
			Help: "Rollbacks to SCHEDULED whose write failed: the job may sit DISPATCHED until the reconciler times it out.",
		}, []string{"topic"}),
		failClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_state_read_fail_closed_total",
			Help: "Job requests refused because the state read failed with an error other than a missing key.",
		}, []string{"topic"}),
		retry: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_retry_total",
			Help: "Job requests handed back to the bus for redelivery, by the phase that failed.",
		}, []string{"phase"}),
		dlq: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_dlq_total",
			Help: "Dead-letter entries written, by root-cause reason code.",
		}, []string{"reason_code"}),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_dispatch_published_total",
			Help: "Job dispatches the bus acknowledged.",
		}, []string{"topic"}),
		redeliverySkip: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_redelivery_skipped_total",
			Help: "Job requests dropped by the redelivery gate, by the state that stopped them.",
		}, []string{"state"}),
		lockFenced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_lock_fenced_total",
			Help: "Critical sections cut off because their job lock could not be renewed.",
		}),
		unknownWrite: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_unknown_write_total",
			Help: "DISPATCHED writes whose outcome was unknown, by what the confirming read found.",
		}, []string{"outcome"}),
		resultIgnored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_result_ignored_total",
			Help: "Worker results dropped: late, duplicate or from an earlier dispatch.",
		}, []string{"reason"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_reconciler_timeout_total",
			Help: "Jobs the reconciler moved to TIMEOUT, by the state they were stuck in.",
		}, []string{"from"}),
		republishWithheld: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_republish_withheld_total",
			Help: "Dispatches not re-published after a failed publish because the broker's de-duplication window had passed; the job waits DISPATCHED.",
		}, []string{"topic"}),
		publishWithheld: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_publish_withheld_total",
			Help: "Dispatches written DISPATCHED but not published because the job lock was lost (or its state unknown) when the publish was due.",
		}, []string{"cause"}),
	}
	for _, c := range []prometheus.Collector{
		m.rollback, m.rollbackFailure, m.failClosed, m.retry, m.dlq, m.published,
		m.redeliverySkip, m.lockFenced, m.unknownWrite, m.resultIgnored, m.timeouts, m.republishWithheld,
		m.publishWithheld,
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register scheduler metrics: %w", err)
		}
	}
	return m, nil
}
