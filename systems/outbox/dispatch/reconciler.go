package dispatch

import (
	"context"
	"errors"
	"fmt"
)

// ReconcileOnce moves jobs DISPATCHED past the dispatch timeout, or RUNNING
// past the running timeout, to TIMEOUT with a DLQ entry. Each move is a
// compare-and-transition from the version it observed, so it never
// overwrites a result that landed meanwhile. A job timed out while its
// dispatch still sat in the outbox is never published: the relay drops it.
func (d *Dispatcher) ReconcileOnce(ctx context.Context) error {
	var errs []error
	for _, st := range []JobState{StateDispatched, StateRunning} {
		if err := d.reconcileState(ctx, st); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *Dispatcher) reconcileState(ctx context.Context, st JobState) error {
	// The job's age is the store's: its state was stamped there, maybe by a
	// replica whose clock runs minutes from this one's.
	now, err := d.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	timeout, code := d.cfg.DispatchTimeout, ReasonDispatchTimeout
	if st == StateRunning {
		timeout, code = d.cfg.RunningTimeout, ReasonRunningTimeout
	}
	ids, err := d.store.StaleJobs(ctx, st, now.Add(-timeout), d.cfg.SweepBatch)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	var errs []error
	for _, id := range ids {
		job, err := d.store.Get(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("reconcile: %w", err))
			continue
		}
		if job.State != st || now.Sub(job.UpdatedAt) < timeout {
			continue
		}
		entry := &DLQEntry{JobID: job.ID, Topic: job.Topic, Status: StateTimeout,
			Reason:     fmt.Sprintf("%s for %s (timeout %s)", st, now.Sub(job.UpdatedAt), timeout),
			ReasonCode: code, LastState: st, Attempts: job.Attempts, AtMs: now.UnixMilli()}
		_, err = d.store.Transition(ctx, Transition{JobID: job.ID, From: st, Version: job.Version,
			To: StateTimeout, Reason: string(code), DLQ: entry})
		if IsTransitionRefused(err) {
			continue // it moved on since we looked
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reconcile: %w", err))
			continue
		}
		d.metrics.timeouts.WithLabelValues(string(st)).Inc()
		d.noteDLQ(entry)
	}
	return errors.Join(errs...)
}

// ReplayPendingOnce re-drives PENDING, SCHEDULED and RETRYING jobs untouched
// for ReplayAfter through HandleJobRequest (a request lost by the bus, a NAK
// that never came back, a retryable failure awaiting its re-dispatch).
func (d *Dispatcher) ReplayPendingOnce(ctx context.Context) error {
	now, err := d.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	cutoff := now.Add(-d.cfg.ReplayAfter)
	var errs []error
	for _, st := range []JobState{StatePending, StateScheduled, StateRetrying} {
		ids, err := d.store.StaleJobs(ctx, st, cutoff, d.cfg.SweepBatch)
		if err != nil {
			errs = append(errs, fmt.Errorf("replay: %w", err))
			continue
		}
		for _, id := range ids {
			job, err := d.store.Get(ctx, id)
			if err != nil {
				errs = append(errs, fmt.Errorf("replay: %w", err))
				continue
			}
			if err := d.HandleJobRequest(ctx, job.Request()); err != nil {
				if _, retry := AsRetryAfter(err); !retry {
					errs = append(errs, fmt.Errorf("replay job %s: %w", id, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}
