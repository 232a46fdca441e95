package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HandleJobRequest schedules and dispatches one job (sys.job.submit, and the
// pending replayer). It is safe under redelivery: a job already DISPATCHED,
// RUNNING or terminal is left alone, and DISPATCHED is written before the
// publish, so a failed state write can never be followed by a second dispatch.
//
// It returns nil (ack), a *RetryAfterError (NAK with delay) or, never in
// practice, another error (ack and drop).
func (e *Engine) HandleJobRequest(ctx context.Context, req JobRequest) error {
	if req.JobID == "" || req.Topic == "" {
		return e.rejectInvalid(ctx, req)
	}
	return e.withJobLock(ctx, req.JobID, func(ctx context.Context, lock *heldLock) error {
		return e.processJob(ctx, req, lock)
	})
}

// rejectInvalid fails a request without a job id or topic. With no id there is
// nothing to store; the DLQ message is all that records it.
func (e *Engine) rejectInvalid(ctx context.Context, req JobRequest) error {
	entry := &DLQEntry{JobID: req.JobID, Topic: req.Topic, Status: StateFailed,
		Reason: "job request without job id or topic", ReasonCode: ReasonInvalidRequest, AtMs: e.clock.Now().UnixMilli()}
	if req.JobID != "" {
		_, err := e.store.Transition(ctx, Transition{JobID: req.JobID, From: "", To: StateFailed,
			Reason: string(ReasonInvalidRequest), DLQ: entry, Fields: jobFields(req)})
		if err != nil && !IsTransitionRefused(err) {
			return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
		}
		if err != nil {
			return nil // the id belongs to a job that exists: leave it alone
		}
	}
	e.emitDLQ(ctx, entry)
	return nil
}

func (e *Engine) processJob(ctx context.Context, req JobRequest, lock *heldLock) error {
	job, err := e.store.Get(ctx, req.JobID)
	switch {
	case errors.Is(err, ErrJobNotFound):
		job, err = e.createJob(ctx, req, lock)
		if err != nil {
			return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
		}
	case err != nil:
		// Fail closed: with the state unknown, dispatching is a guess.
		e.metrics.failClosed.WithLabelValues(req.Topic).Inc()
		e.log.Error("state read failed, failing closed", "job_id", req.JobID, "error", err)
		return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
	}

	switch {
	case job.State == StateDispatched || job.State == StateRunning || job.State.Terminal():
		e.metrics.redeliverySkip.WithLabelValues(string(job.State)).Inc()
		return nil
	case job.State != StatePending && job.State != StateScheduled && job.State != StateRetrying:
		return nil // no other state exists; the table admits nothing else
	}

	// A dispatch whose publish failed may have been stored all the same (the
	// error is ambiguous), and its worker may be running it. Re-publishing it
	// under the same message id is safe only while the broker still drops the
	// copy; after that no new publish can be told apart from a second execution.
	// Checked before the retry cap: while a copy may be live, only its result or
	// the dispatch timeout may end the job.
	msgID := DispatchMessageID(job.ID, job.DispatchGen)
	earlierAttempt := job.PublishMsgID == msgID
	if earlierAttempt {
		inside, err := e.insideDedupWindow(ctx, job, time.Time{})
		if err != nil {
			return e.storeRetry(err)
		}
		if !inside {
			return e.awaitEarlierPublish(ctx, job, lock, msgID, "outside the de-duplication window")
		}
	}

	if job.Attempts >= e.cfg.MaxSchedulingRetries {
		cause := job.LastErrorCode
		cause, fields := e.causeAtCap(ctx, job, cause)
		return e.failJob(ctx, job, lock, cause, true,
			fmt.Sprintf("max scheduling retries exceeded (attempts=%d, last cause %s: %s)", job.Attempts, cause, job.LastError),
			fields...)
	}

	// A scheduling pass: entering SCHEDULED counts the attempt.
	res, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: job.State, Version: job.Version,
		To: StateScheduled, Reason: "schedule", Fence: lock})
	if err != nil {
		return e.storeRetry(err)
	}
	job.State, job.Version, job.Attempts = StateScheduled, res.Version, res.Attempts

	keep := ""
	if earlierAttempt {
		keep = job.PublishWorker
	}
	workerID, err := e.pick(ctx, job, keep)
	if err != nil {
		return e.handlePickError(ctx, job, lock, err)
	}
	if earlierAttempt && workerID != job.PublishWorker {
		// The first copy's worker can take no more: a copy on another
		// worker's subject may sit in another stream, and another window.
		return e.awaitEarlierPublish(ctx, job, lock, msgID,
			fmt.Sprintf("its worker %s is gone or overloaded", orUnknown(job.PublishWorker)))
	}

	dispatchID := newToken(e.rand)
	// A pick that succeeded ends the pick failure it recorded: left behind, its
	// code would name a healed cause if the job later failed at the cap.
	fields := []Field{{"dispatch_id", dispatchID}, {"worker", workerID}, {"pick_fail_since", ""},
		{"last_error_code", ""}, {"last_error", ""}}
	var stamped []string
	if !earlierAttempt {
		// Recorded with DISPATCHED, before the publish it dates, on the
		// store's clock: the window of every later re-publish of this message
		// id counts from here, whichever replica makes it.
		job.PublishMsgID, job.PublishWorker = msgID, workerID
		fields = append(fields, Field{"publish_msg_id", msgID}, Field{"publish_worker", workerID})
		stamped = []string{"publish_first_at"}
	}
	res, err = e.store.Transition(ctx, Transition{JobID: job.ID, From: StateScheduled, Version: job.Version,
		To: StateDispatched, Reason: "dispatch " + workerID, Fence: lock, Fields: fields, Stamped: stamped})
	if err == nil && !earlierAttempt {
		job.PublishFirstAt = res.At
	}
	if err != nil {
		if IsTransitionRefused(err) || !e.confirmDispatched(ctx, job.ID, dispatchID) {
			// The write did not land (or we cannot tell): publish nothing.
			return e.retry(PhaseDispatchedWrite, e.cfg.StoreRetryDelay, err)
		}
		res.Version = 0 // landed, version unknown: later writes check the state only
	}

	packet, err := json.Marshal(JobPacket{JobID: job.ID, Topic: job.Topic, Tenant: job.Tenant, Payload: job.Payload,
		DispatchGen: job.DispatchGen, DispatchID: dispatchID, Attempt: job.Attempts})
	if err != nil {
		return fmt.Errorf("encode job %s: %w", job.ID, err) // cannot happen: plain fields
	}
	if earlierAttempt && !e.stillInsideDedupWindow(ctx, job, res.At) {
		// The DISPATCHED write itself outlasted the window: the job stays
		// DISPATCHED, unpublished, like a parked one.
		e.metrics.republishWithheld.WithLabelValues(job.Topic).Inc()
		e.log.Warn("re-publish withheld: de-duplication window passed during the dispatch write", "job_id", job.ID, "msg_id", msgID)
		return nil
	}
	// The publish is the one step no store script can fence. A pause since the
	// DISPATCHED write may have outlived the lock, and its next holder (the
	// reconciler) may have moved the job on: make sure of both now, and
	// publish only with the lock ours for a whole TTL ahead.
	ctx, err = e.confirmLockBeforePublish(ctx, job.ID, dispatchID, lock)
	if err != nil {
		return e.retry(PhasePublish, e.cfg.StoreRetryDelay, err)
	}
	msg := Message{ID: msgID, Data: packet}
	if err := e.bus.Publish(ctx, WorkerSubject(workerID), msg); err != nil {
		return e.rollbackDispatch(ctx, job, res.Version, lock, err)
	}
	e.metrics.published.WithLabelValues(job.Topic).Inc()
	e.registry.noteDispatched(workerID)

	// The job is out: a failed RUNNING write leaves it DISPATCHED, which the
	// redelivery gate skips and the worker's result or the reconciler resolves.
	if _, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: StateDispatched, Version: res.Version,
		To: StateRunning, Reason: "published", Fence: lock}); err != nil {
		e.log.Warn("RUNNING write after publish failed; job stays DISPATCHED", "job_id", job.ID, "error", err)
	}
	return nil
}

func jobFields(req JobRequest) []Field {
	return []Field{{"topic", req.Topic}, {"tenant", req.Tenant}, {"preferred_pool", req.PreferredPool},
		{"requires", strings.Join(req.Requires, ",")}, {"payload", string(req.Payload)}}
}

// createJob writes a new job's metadata as PENDING.
func (e *Engine) createJob(ctx context.Context, req JobRequest, lock *heldLock) (*Job, error) {
	res, err := e.store.Transition(ctx, Transition{JobID: req.JobID, From: "", To: StatePending,
		Reason: "submit", Fence: lock, Fields: jobFields(req)})
	if err != nil {
		return nil, err
	}
	return &Job{ID: req.JobID, Topic: req.Topic, Tenant: req.Tenant, PreferredPool: req.PreferredPool,
		Requires: req.Requires, Payload: req.Payload, State: StatePending, Version: res.Version}, nil
}

// storeRetry maps a failed or refused write to the bus contract. A job that
// turned terminal under us is done; anything else is retried.
func (e *Engine) storeRetry(err error) error {
	var te *TransitionError
	if errors.As(err, &te) && te.Reason == RefusedTerminal {
		return nil
	}
	return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
}

// confirmDispatched resolves a DISPATCHED write whose outcome is unknown (a lost
// reply): it landed only if the job now carries this pass's dispatch id. Without
// this the job would sit DISPATCHED, never published, until the reconciler's
// dispatch timeout.
func (e *Engine) confirmDispatched(ctx context.Context, jobID, dispatchID string) bool {
	if fenceErr(ctx) != nil {
		e.metrics.unknownWrite.WithLabelValues("fenced").Inc()
		return false
	}
	job, err := e.store.Get(ctx, jobID)
	switch {
	case err != nil:
		e.metrics.unknownWrite.WithLabelValues("unresolved").Inc()
		return false
	case job.State == StateDispatched && job.DispatchID == dispatchID:
		e.metrics.unknownWrite.WithLabelValues("applied").Inc()
		return true
	default:
		e.metrics.unknownWrite.WithLabelValues("not_applied").Inc()
		return false
	}
}

// confirmLockBeforePublish renews the job's lock for a full TTL. A lock that
// merely expired (a pause, nobody else came) is taken again and the job read:
// still DISPATCHED by this pass, nobody moved it, and the publish goes ahead.
// An error means the lock is another's, the job moved on, or either is
// unknown: the job stays DISPATCHED, unpublished, for its new holder or the
// reconciler's dispatch timeout; publishing it could dispatch a job that is
// no longer ours to dispatch.
//
// The section's context comes back: after a retake, a fresh one, since the
// renewal timer may have seen the lock gone and fenced the section.
func (e *Engine) confirmLockBeforePublish(ctx context.Context, jobID, dispatchID string, lock *heldLock) (context.Context, error) {
	var held bool
	var err error
	if fenceErr(ctx) == nil {
		held, err = e.locks.renew(ctx, lock, e.cfg.LockTTL)
	}
	// Fenced before the renewal or during it, or the renewal found the lock
	// gone: the retake decides, on a context of its own, since the section's
	// renewal timer may fence it at any moment for the loss the retake repairs.
	switch cause := fenceErr(ctx); {
	case cause != nil && !errors.Is(cause, ErrLockLost):
		return ctx, cause
	case cause != nil || err == nil && !held:
		ctx = context.WithoutCancel(ctx)
		held, err = e.retake(ctx, jobID, dispatchID, lock)
	}
	switch {
	case err != nil:
		e.metrics.publishWithheld.WithLabelValues("lock_unknown").Inc()
		return ctx, err
	case !held:
		e.metrics.publishWithheld.WithLabelValues("lock_lost").Inc()
		return ctx, fmt.Errorf("%w: %s lost before the publish (another holds it, or the job moved on)", ErrLockLost, lock.key)
	}
	return ctx, nil
}

// retake takes an expired job lock again under the same token and reports
// whether the job is still as this pass left it: DISPATCHED with its
// dispatch id. Whoever held the lock meanwhile either left the job alone or
// moved it, and the record says which.
func (e *Engine) retake(ctx context.Context, jobID, dispatchID string, lock *heldLock) (bool, error) {
	ok, err := e.locks.rdb.SetNX(ctx, lock.key, lock.token, e.cfg.LockTTL).Result()
	if err != nil || !ok {
		return false, err
	}
	job, err := e.store.Get(ctx, jobID)
	if err != nil {
		return false, err
	}
	return job.State == StateDispatched && job.DispatchID == dispatchID, nil
}

// rollbackDispatch returns a job whose publish failed to SCHEDULED, conditional
// on it still being the DISPATCHED we wrote, and asks for a retry with backoff.
// If the rollback write fails the job stays DISPATCHED until the reconciler
// times it out; that blind window has its own metric.
func (e *Engine) rollbackDispatch(ctx context.Context, job *Job, version int64, lock *heldLock, pubErr error) error {
	e.metrics.rollback.WithLabelValues(job.Topic).Inc()
	e.log.Warn("publish failed, rolling back to SCHEDULED", "job_id", job.ID, "error", pubErr)
	res, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: StateDispatched, Version: version,
		To: StateScheduled, Reason: "rollback: " + pubErr.Error(), Fence: lock,
		Fields: []Field{{"last_error_code", string(ReasonPublishFailed)}, {"last_error", pubErr.Error()}}})
	attempts := job.Attempts
	if err != nil {
		e.metrics.rollbackFailure.WithLabelValues(job.Topic).Inc()
		e.log.Error("dispatch rollback failed", "job_id", job.ID, "error", err)
		return e.retry(PhaseRollbackWrite, e.backoff(attempts), fmt.Errorf("publish job %s: %w (rollback: %v)", job.ID, pubErr, err))
	}
	return e.retry(PhasePublish, e.backoff(res.Attempts), fmt.Errorf("publish job %s: %w", job.ID, pubErr))
}

// insideDedupWindow reports whether a re-publish of the job's recorded message
// id would still fall inside the broker's de-duplication window, measured on
// the store's clock (at, or read now when at is zero): the first publish may
// have been another replica's, and replicas' clocks disagree.
func (e *Engine) insideDedupWindow(ctx context.Context, job *Job, at time.Time) (bool, error) {
	if at.IsZero() {
		var err error
		if at, err = e.store.Now(ctx); err != nil {
			return false, err
		}
	}
	return at.Sub(job.PublishFirstAt) < e.cfg.DedupWindow, nil
}

// stillInsideDedupWindow is insideDedupWindow after the DISPATCHED write
// (at its store time, if its reply came back); a time it cannot read counts
// as outside: the job then waits, unpublished, rather than risk a copy the
// broker keeps.
func (e *Engine) stillInsideDedupWindow(ctx context.Context, job *Job, at time.Time) bool {
	inside, err := e.insideDedupWindow(ctx, job, at)
	return err == nil && inside
}

func orUnknown(s string) string {
	if s == "" {
		return "(unrecorded)"
	}
	return s
}

// awaitEarlierPublish parks a job whose earlier publish of msgID may have been
// stored, now that the broker might not drop a re-publish (why): it writes
// DISPATCHED without publishing, so the redelivery gate holds it, the first
// copy's result (same generation) completes it, and if that copy was never
// stored the reconciler times it out. A TIMEOUT is the price of not knowing;
// a second execution would be worse.
func (e *Engine) awaitEarlierPublish(ctx context.Context, job *Job, lock *heldLock, msgID, why string) error {
	_, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: job.State, Version: job.Version,
		To: StateDispatched, Fence: lock,
		Reason: fmt.Sprintf("await publish of %s: first attempted at %d, %s", msgID, job.PublishFirstAt.UnixMilli(), why)})
	if err != nil {
		return e.storeRetry(err)
	}
	e.metrics.republishWithheld.WithLabelValues(job.Topic).Inc()
	e.log.Warn("re-publish withheld; awaiting the first copy's result or the dispatch timeout",
		"job_id", job.ID, "msg_id", msgID, "why", why)
	return nil
}

// pick chooses the worker for the job, checking the tenant's cap first;
// keep names a worker to keep while it can take the job ("": none).
func (e *Engine) pick(ctx context.Context, job *Job, keep string) (string, error) {
	if limit, ok := e.cfg.TenantMaxActive[job.Tenant]; ok && job.Tenant != "" {
		n, err := e.store.TenantActive(ctx, job.Tenant)
		if err != nil {
			return "", err
		}
		if n >= int64(limit) {
			return "", schedErr(ReasonTenantLimit, false, "tenant %q has %d active jobs (limit %d)", job.Tenant, n, limit)
		}
	}
	return pickKeeping(e.routing.Load(), e.registry, job.Request(), e.clock.Now(), keep)
}

// causeAtCap names why a job that reached the retry cap could not be placed,
// given the cause it recorded. A recorded cause names it only while it still
// holds: a routing cause that healed, followed by a pick that succeeded and a
// write that failed, would misname the failure. So the pick is asked again:
// its scheduling error is the cause; a pick that succeeds now leaves only the
// cap, and the stale cause is cleared with the failure.
func (e *Engine) causeAtCap(ctx context.Context, job *Job, recorded ReasonCode) (ReasonCode, []Field) {
	if recorded == "" {
		return ReasonMaxSchedulingRetries, nil
	}
	_, err := e.pick(ctx, job, "")
	var se *SchedulingError
	switch {
	case errors.As(err, &se):
		return se.Code, nil
	case err == nil:
		return ReasonMaxSchedulingRetries, []Field{{"last_error_code", ""}, {"last_error", ""}}
	}
	return recorded, nil
}

// handlePickError retries a failed pick with backoff, or fails the job once a
// permanent cause has outlived the grace window. The cause is recorded on the
// job so a DLQ entry at the cap names it.
func (e *Engine) handlePickError(ctx context.Context, job *Job, lock *heldLock, err error) error {
	var se *SchedulingError
	if !errors.As(err, &se) {
		return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err) // tenant count failed
	}
	// The grace window's start may be another replica's: both ends are the
	// store's time.
	now, terr := e.store.Now(ctx)
	if terr != nil {
		return e.retry(PhaseStore, e.cfg.StoreRetryDelay, terr)
	}
	since := job.PickFailSince
	fields := []Field{{"last_error_code", string(se.Code)}, {"last_error", se.Detail}}
	if se.Permanent {
		if since.IsZero() {
			since = now
			fields = append(fields, Field{"pick_fail_since", strconv.FormatInt(now.UnixMilli(), 10)})
		}
		if now.Sub(since) >= e.cfg.NoPoolMappingGrace {
			return e.failJob(ctx, job, lock, se.Code, false,
				fmt.Sprintf("%s (unresolved for %s)", se.Detail, now.Sub(since)))
		}
	} else if !since.IsZero() {
		fields = append(fields, Field{"pick_fail_since", ""})
	}
	if uerr := e.store.SetFields(ctx, job.ID, job.State, lock, fields); uerr != nil {
		e.log.Warn("recording pick failure failed", "job_id", job.ID, "error", uerr)
	}
	return e.retry(PhasePick, e.backoff(job.Attempts), err)
}

// failJob moves the job to FAILED with its DLQ entry in the same atomic write,
// then announces the entry on the bus.
func (e *Engine) failJob(ctx context.Context, job *Job, lock *heldLock, code ReasonCode, exhausted bool, reason string, fields ...Field) error {
	entry := &DLQEntry{JobID: job.ID, Topic: job.Topic, Status: StateFailed, Reason: reason, ReasonCode: code,
		LastState: job.State, Attempts: job.Attempts, RetriesExhausted: exhausted, AtMs: e.clock.Now().UnixMilli()}
	_, err := e.store.Transition(ctx, Transition{JobID: job.ID, From: job.State, Version: job.Version,
		To: StateFailed, Reason: string(code), Fence: lock, Fields: fields, DLQ: entry})
	if err != nil {
		return e.storeRetry(err)
	}
	e.emitDLQ(ctx, entry)
	return nil
}

// emitDLQ publishes a stored DLQ entry. The stored entry is the record; a failed
// announcement is only logged.
func (e *Engine) emitDLQ(ctx context.Context, entry *DLQEntry) {
	e.metrics.dlq.WithLabelValues(string(entry.ReasonCode)).Inc()
	b, err := json.Marshal(entry)
	if err == nil {
		err = e.bus.Publish(ctx, SubjectDLQ, Message{ID: "dlq:" + entry.JobID, Data: b})
	}
	if err != nil {
		e.log.Warn("dlq publish failed; entry is stored", "job_id", entry.JobID, "error", err)
	}
}
