package engine

import (
	"context"
	"errors"
	"fmt"
)

// HandleJobResult records a worker's result. Results for a terminal job (late or
// duplicate) and results of an earlier dispatch generation are ignored; the
// result pointer is written in the same atomic step as the new state.
func (e *Engine) HandleJobResult(ctx context.Context, res JobResult) error {
	if res.JobID == "" {
		return nil
	}
	return e.withJobLock(ctx, res.JobID, func(ctx context.Context, lock *heldLock) error {
		job, err := e.store.Get(ctx, res.JobID)
		if errors.Is(err, ErrJobNotFound) {
			e.metrics.resultIgnored.WithLabelValues("unknown_job").Inc()
			return nil
		}
		if err != nil {
			return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
		}
		switch {
		case job.State.Terminal():
			e.metrics.resultIgnored.WithLabelValues("terminal").Inc()
			return nil
		case res.DispatchGen != job.DispatchGen:
			e.metrics.resultIgnored.WithLabelValues("stale_dispatch").Inc()
			return nil
		case job.State != StateScheduled && job.State != StateDispatched && job.State != StateRunning:
			e.metrics.resultIgnored.WithLabelValues("not_dispatched").Inc()
			return nil
		}

		to, code := resultState(res.Status)
		t := Transition{JobID: job.ID, From: job.State, Version: job.Version, To: to,
			Reason: "result " + res.Status + " from " + res.WorkerID, Fence: lock,
			Fields: []Field{{"result_ptr", res.ResultPtr}, {"last_error", res.Error}}}
		var entry *DLQEntry
		if to == StateFailed {
			entry = &DLQEntry{JobID: job.ID, Topic: job.Topic, Status: StateFailed,
				Reason:     fmt.Sprintf("worker %s reported %s: %s", res.WorkerID, res.Status, res.Error),
				ReasonCode: code, LastState: job.State, Attempts: job.Attempts, AtMs: e.clock.Now().UnixMilli()}
			t.DLQ = entry
			t.Fields = append(t.Fields, Field{"last_error_code", string(code)})
		}
		if _, err := e.store.Transition(ctx, t); err != nil {
			return e.storeRetry(err)
		}
		if entry != nil {
			e.emitDLQ(ctx, entry)
		}
		return nil
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

// HandleCancel cancels a job unless it is terminal. A cancel that arrives before
// the job's request creates it as CANCELLED, so the request is then skipped.
func (e *Engine) HandleCancel(ctx context.Context, req CancelRequest) error {
	if req.JobID == "" {
		return nil
	}
	return e.withJobLock(ctx, req.JobID, func(ctx context.Context, lock *heldLock) error {
		job, err := e.store.Get(ctx, req.JobID)
		from, version := JobState(""), int64(0)
		switch {
		case errors.Is(err, ErrJobNotFound):
		case err != nil:
			return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
		case job.State.Terminal():
			return nil
		default:
			from, version = job.State, job.Version
		}
		_, err = e.store.Transition(ctx, Transition{JobID: req.JobID, From: from, Version: version,
			To: StateCancelled, Reason: "cancel: " + req.Reason, Fence: lock})
		if err != nil {
			return e.storeRetry(err)
		}
		return nil
	})
}
