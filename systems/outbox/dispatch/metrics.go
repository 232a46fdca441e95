package dispatch

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are registered on the Registerer handed in, never on the global
// registry, so several replicas can live in one process.
type metrics struct {
	written        *prometheus.CounterVec // outbox_entries_written_total{kind}
	published      *prometheus.CounterVec // outbox_relay_published_total{kind}
	publishFailed  *prometheus.CounterVec // outbox_relay_publish_failed_total{kind}
	republished    *prometheus.CounterVec // outbox_relay_republished_total{kind}
	markSentFailed prometheus.Counter     // outbox_relay_mark_sent_failed_total
	dropped        *prometheus.CounterVec // outbox_entries_dropped_total{reason}
	retry          *prometheus.CounterVec // outbox_retry_total{phase}
	dlq            *prometheus.CounterVec // outbox_dlq_total{reason_code}
	redeliverySkip *prometheus.CounterVec // outbox_redelivery_skipped_total{state}
	resultIgnored  *prometheus.CounterVec // outbox_result_ignored_total{reason}
	timeouts       *prometheus.CounterVec // outbox_reconciler_timeout_total{from}
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	vec := func(name, help, label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	m := &metrics{
		written:       vec("outbox_entries_written_total", "Outbox entries written with their state change, by kind (dispatch, dlq).", "kind"),
		published:     vec("outbox_relay_published_total", "Outbox entries the bus acknowledged, each publish counted (re-publishes included).", "kind"),
		publishFailed: vec("outbox_relay_publish_failed_total", "Relay publishes that failed; the entry stays and is retried after its lease.", "kind"),
		republished:   vec("outbox_relay_republished_total", "Publishes of an entry claimed before: a failed publish or mark-sent retried, at least once.", "kind"),
		markSentFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "outbox_relay_mark_sent_failed_total",
			Help: "Published entries whose mark-sent write failed; they are published again, under the same message id."}),
		dropped:        vec("outbox_entries_dropped_total", "Entries dropped unsent because their dispatch no longer mattered.", "reason"),
		retry:          vec("outbox_retry_total", "Messages handed back to the bus for redelivery, by the phase that failed.", "phase"),
		dlq:            vec("outbox_dlq_total", "Dead-letter entries written, by root-cause reason code.", "reason_code"),
		redeliverySkip: vec("outbox_redelivery_skipped_total", "Job requests dropped because the job was already dispatched or terminal.", "state"),
		resultIgnored:  vec("outbox_result_ignored_total", "Worker results dropped: late, duplicate or from an earlier dispatch.", "reason"),
		timeouts:       vec("outbox_reconciler_timeout_total", "Jobs the reconciler moved to TIMEOUT, by the state they were stuck in.", "from"),
	}
	for _, c := range []prometheus.Collector{m.written, m.published, m.publishFailed, m.republished, m.markSentFailed,
		m.dropped, m.retry, m.dlq, m.redeliverySkip, m.resultIgnored, m.timeouts} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register outbox metrics: %w", err)
		}
	}
	return m, nil
}
