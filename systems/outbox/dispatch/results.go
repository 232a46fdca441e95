package dispatch

import (
	"context"
	"errors"
	"fmt"
)

// HandleJobResult records a worker's result. Results for a terminal job (late
// or duplicate) and results of an earlier dispatch generation are ignored;
// the result pointer is written in the same step as the new state, and a
// FAILED job's DLQ entry with it.
func (d *Dispatcher) HandleJobResult(ctx context.Context, res JobResult) error {
	if res.JobID == "" {
		return nil
	}
	return d.untilSettled(ctx, func(ctx context.Context) (bool, error) {
		job, err := d.store.Get(ctx, res.JobID)
		if errors.Is(err, ErrJobNotFound) {
			d.metrics.resultIgnored.WithLabelValues("unknown_job").Inc()
			return true, nil
		}
		if err != nil {
			return true, d.retry(PhaseStore, d.cfg.StoreRetryDelay, err)
		}
		switch {
		case job.State.Terminal():
			d.metrics.resultIgnored.WithLabelValues("terminal").Inc()
			return true, nil
		case res.DispatchGen != job.DispatchGen:
			d.metrics.resultIgnored.WithLabelValues("stale_dispatch").Inc()
			return true, nil
		case job.State != StateDispatched && job.State != StateRunning:
			d.metrics.resultIgnored.WithLabelValues("not_dispatched").Inc()
			return true, nil
		}
		to, code := resultState(res.Status)
		t := Transition{JobID: job.ID, From: job.State, Version: job.Version, To: to,
			Reason: "result " + res.Status + " from " + res.WorkerID,
			Fields: []Field{{"result_ptr", res.ResultPtr}, {"last_error", res.Error}}}
		var entry *DLQEntry
		if to == StateFailed {
			entry = &DLQEntry{JobID: job.ID, Topic: job.Topic, Status: StateFailed,
				Reason:     fmt.Sprintf("worker %s reported %s: %s", res.WorkerID, res.Status, res.Error),
				ReasonCode: code, LastState: job.State, Attempts: job.Attempts, AtMs: d.clock.Now().UnixMilli()}
			t.DLQ = entry
			t.Fields = append(t.Fields, Field{"last_error_code", string(code)})
		}
		_, err = d.store.Transition(ctx, t)
		if err == nil && entry != nil {
			d.noteDLQ(entry)
		}
		return d.settle(err, PhaseStore)
	})
}

// resultState maps a worker status to the job's next state.
func resultState(status string) (JobState, ReasonCode) {
	switch status {
	case ResultSucceeded, ResultCompleted:
		return StateSucceeded, ""
	case ResultFailed, ResultFailedFatal:
		return StateFailed, ReasonJobFailed
	case ResultFailedRetryable:
		return StateRetrying, ""
	default:
		return StateFailed, ReasonUnknownResult
	}
}

// HandleCancel cancels a job unless it is terminal. A cancel that arrives
// before the job's request creates it as CANCELLED, so the request is then
// skipped; a dispatch still in the outbox is dropped by the relay.
func (d *Dispatcher) HandleCancel(ctx context.Context, req CancelRequest) error {
	if req.JobID == "" {
		return nil
	}
	return d.untilSettled(ctx, func(ctx context.Context) (bool, error) {
		job, err := d.store.Get(ctx, req.JobID)
		from, version := JobState(""), int64(0)
		switch {
		case errors.Is(err, ErrJobNotFound):
		case err != nil:
			return true, d.retry(PhaseStore, d.cfg.StoreRetryDelay, err)
		case job.State.Terminal():
			return true, nil
		default:
			from, version = job.State, job.Version
		}
		_, err = d.store.Transition(ctx, Transition{JobID: req.JobID, From: from, Version: version,
			To: StateCancelled, Reason: "cancel: " + req.Reason})
		return d.settle(err, PhaseStore)
	})
}

// untilSettled runs a read-then-compare-and-transition pass until it settles,
// re-reading when a concurrent writer moved the job, at most staleRetries
// times before asking the bus for a redelivery.
func (d *Dispatcher) untilSettled(ctx context.Context, pass func(ctx context.Context) (bool, error)) error {
	var lastErr error
	for range staleRetries {
		done, err := pass(ctx)
		if done {
			return err
		}
		lastErr = err
	}
	return d.retry(PhaseContention, d.cfg.StoreRetryDelay, lastErr)
}
