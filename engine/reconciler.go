package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ReconcileOnce moves jobs stuck DISPATCHED past their dispatch timeout, or
// RUNNING past the running timeout, to TIMEOUT with a DLQ entry. Each move is a
// compare-and-transition from the exact version it observed, so it can never
// overwrite a result (or a re-dispatch) that landed meanwhile; and it is made
// under the job's lock, tried once, so it never lands between a handler's
// DISPATCHED write and that handler's publish (which would then dispatch a job
// already TIMEOUT). A busy lock is left for the next pass.
func (e *Engine) ReconcileOnce(ctx context.Context) error {
	var errs []error
	for _, st := range []JobState{StateDispatched, StateRunning} {
		if err := e.reconcileState(ctx, st); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) reconcileState(ctx context.Context, st JobState) error {
	// The job's age is the store's: its state was stamped there, maybe by a
	// replica whose clock runs minutes from this one's.
	now, err := e.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	ids, err := e.store.StaleJobs(ctx, st, now.Add(-e.minTimeout(st)), e.cfg.SweepBatch)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	var errs []error
	for _, id := range ids {
		if err := e.timeOutIfStale(ctx, id, st, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// timeOutIfStale moves one job to TIMEOUT if it is still st past its timeout,
// holding its lock; a lock another handler holds means the job is being
// worked on now, and is skipped.
func (e *Engine) timeOutIfStale(ctx context.Context, id string, st JobState, now time.Time) error {
	lock, err := e.locks.acquire(ctx, jobLockKey(id), lockSpec{TTL: e.cfg.LockTTL, Poll: e.cfg.LockPoll})
	if errors.Is(err, ErrLockBusy) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() {
		if rerr := e.locks.release(ctx, lock); rerr != nil {
			e.log.Warn("job lock release failed; it expires on its own", "job_id", id, "error", rerr)
		}
	}()
	job, err := e.store.Get(ctx, id)
	if err != nil {
		return err
	}
	timeout := e.timeoutFor(job.Topic, st)
	if job.State != st || now.Sub(job.UpdatedAt) < timeout {
		return nil
	}
	code := ReasonDispatchTimeout
	if st == StateRunning {
		code = ReasonRunningTimeout
	}
	entry := &DLQEntry{JobID: job.ID, Topic: job.Topic, Status: StateTimeout,
		Reason:     fmt.Sprintf("%s for %s (timeout %s)", st, now.Sub(job.UpdatedAt), timeout),
		ReasonCode: code, LastState: st, Attempts: job.Attempts, AtMs: now.UnixMilli()}
	_, err = e.store.Transition(ctx, Transition{JobID: job.ID, From: st, Version: job.Version,
		To: StateTimeout, Reason: string(code), Fence: lock, DLQ: entry})
	if IsTransitionRefused(err) {
		return nil // it moved on since we looked
	}
	if err != nil {
		return err
	}
	e.metrics.timeouts.WithLabelValues(string(st)).Inc()
	e.emitDLQ(ctx, entry)
	return nil
}

func (e *Engine) timeoutFor(topic string, st JobState) time.Duration {
	if st == StateRunning {
		return e.cfg.RunningTimeout
	}
	if d, ok := e.cfg.DispatchTimeoutByTopic[topic]; ok && d > 0 {
		return d
	}
	return e.cfg.DispatchTimeout
}

// minTimeout is the shortest timeout any topic has for st: the index scan cutoff.
func (e *Engine) minTimeout(st JobState) time.Duration {
	if st == StateRunning {
		return e.cfg.RunningTimeout
	}
	d := e.cfg.DispatchTimeout
	for _, t := range e.cfg.DispatchTimeoutByTopic {
		if t > 0 && t < d {
			d = t
		}
	}
	return d
}

// ReplayPendingOnce re-drives PENDING, SCHEDULED and RETRYING jobs untouched for
// ReplayAfter through HandleJobRequest (a request lost by the bus, a NAK that
// never came back, a retryable failure awaiting its re-dispatch).
func (e *Engine) ReplayPendingOnce(ctx context.Context) error {
	now, err := e.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	cutoff := now.Add(-e.cfg.ReplayAfter)
	var errs []error
	for _, st := range []JobState{StatePending, StateScheduled, StateRetrying} {
		ids, err := e.store.StaleJobs(ctx, st, cutoff, e.cfg.SweepBatch)
		if err != nil {
			errs = append(errs, fmt.Errorf("replay: %w", err))
			continue
		}
		for _, id := range ids {
			job, err := e.store.Get(ctx, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := e.HandleJobRequest(ctx, job.Request()); err != nil {
				if _, retry := AsRetryAfter(err); !retry {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// RunReconciler ticks ReconcileOnce every ReconcileInterval until ctx is done.
// The caller decides where it runs (a goroutine in production, an actor in the
// simulator).
func (e *Engine) RunReconciler(ctx context.Context) error {
	return e.every(ctx, e.cfg.ReconcileInterval, "reconcile", e.ReconcileOnce)
}

// RunReplayer ticks ReplayPendingOnce every ReplayInterval until ctx is done.
func (e *Engine) RunReplayer(ctx context.Context) error {
	return e.every(ctx, e.cfg.ReplayInterval, "replay", e.ReplayPendingOnce)
}

func (e *Engine) every(ctx context.Context, d time.Duration, name string, tick func(context.Context) error) error {
	for {
		if err := e.clock.Sleep(ctx, d); err != nil {
			return err
		}
		if err := tick(ctx); err != nil {
			e.log.Warn(name+" tick failed", "error", err)
		}
	}
}
