package dispatch

import (
	"context"
	"errors"
	"fmt"
)

// RelayOnce publishes what the outbox owes the bus: it claims due entries
// under a lease, publishes each under its own message id and marks it sent.
// It returns how many entries the bus accepted.
//
// Delivery is at least once. A failed publish leaves the entry, and a relay
// that dies (or whose mark-sent write fails) after the bus accepted an entry
// leaves it too: either way the entry is published again, under the same
// message id, once the lease runs out. The broker's de-duplication window
// drops that copy when it lands inside the window; the worker's Consumer
// drops it when it does not.
func (d *Dispatcher) RelayOnce(ctx context.Context) (int, error) {
	if due, err := d.store.HasDueEntries(ctx); err != nil || !due {
		if err != nil {
			return 0, fmt.Errorf("relay: %w", err)
		}
		return 0, nil
	}
	entries, err := d.store.ClaimEntries(ctx, Lease{RelayID: d.relayID, Duration: d.cfg.RelayLease,
		Batch: d.cfg.RelayBatch, Retention: d.cfg.SentRetention})
	if err != nil {
		return 0, fmt.Errorf("relay: %w", err)
	}
	published := 0
	var errs []error
	for _, e := range entries {
		if e.Dropped != "" {
			d.metrics.dropped.WithLabelValues(e.Dropped).Inc()
			continue
		}
		if e.Claims > 1 {
			d.metrics.republished.WithLabelValues(e.Kind).Inc()
		}
		if err := d.bus.Publish(ctx, e.Subject, Message{ID: e.MessageID, Data: e.Data}); err != nil {
			// No state to roll back: the entry waits out its lease and goes again.
			d.metrics.publishFailed.WithLabelValues(e.Kind).Inc()
			errs = append(errs, fmt.Errorf("relay: publish %s %s: %w", e.Kind, e.ID, err))
			continue
		}
		d.metrics.published.WithLabelValues(e.Kind).Inc()
		published++
		if _, err := d.store.MarkSent(ctx, e.ID, d.cfg.SentRetention); err != nil {
			d.metrics.markSentFailed.Inc()
			errs = append(errs, fmt.Errorf("relay: %w", err))
		}
	}
	return published, errors.Join(errs...)
}
