package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// HandleJobRequest schedules and dispatches one job (sys.job.submit, and the
// replayer). It never publishes: it writes DISPATCHED and the outbox entry
// that carries the dispatch in one script, and the relay publishes. It is
// safe under redelivery and against concurrent handlers: a job already
// DISPATCHED, RUNNING or terminal is left alone, and the dispatch script
// applies only to the version it read.
//
// It returns nil (ack) or a *RetryAfterError (NAK with delay).
func (d *Dispatcher) HandleJobRequest(ctx context.Context, req JobRequest) error {
	if req.JobID == "" || req.Topic == "" {
		return d.rejectInvalid(ctx, req)
	}
	return d.untilSettled(ctx, func(ctx context.Context) (bool, error) { return d.tryDispatch(ctx, req) })
}

// tryDispatch makes one pass; done=false means the job moved under us (a
// concurrent handler) and the pass should be made again from a fresh read.
func (d *Dispatcher) tryDispatch(ctx context.Context, req JobRequest) (done bool, err error) {
	job, err := d.store.Get(ctx, req.JobID)
	switch {
	case errors.Is(err, ErrJobNotFound):
		if job, err = d.createJob(ctx, req); err != nil {
			return d.settle(err, PhaseStore)
		}
	case err != nil:
		// Fail closed: with the state unknown, dispatching is a guess.
		return true, d.retry(PhaseStore, d.cfg.StoreRetryDelay, err)
	}
	switch job.State {
	case StatePending, StateScheduled, StateRetrying:
	default:
		d.metrics.redeliverySkip.WithLabelValues(string(job.State)).Inc()
		return true, nil
	}
	if job.Attempts >= d.cfg.MaxSchedulingRetries {
		cause := job.LastErrorCode
		if cause == "" {
			cause = ReasonMaxSchedulingRetries
		}
		return d.settle(d.failJob(ctx, job, cause, true,
			fmt.Sprintf("max scheduling retries exceeded (attempts=%d, last cause %s: %s)", job.Attempts, cause, job.LastError)),
			PhaseStore)
	}

	workerID, err := d.workers.pick(d.routing.Load(), job.Topic, d.clock.Now())
	if err != nil {
		return d.recordPickFailure(ctx, job, err)
	}
	dispatchID := newToken(d.rand)
	packet, err := json.Marshal(JobPacket{JobID: job.ID, Topic: job.Topic, Tenant: job.Tenant, Payload: job.Payload,
		DispatchGen: job.DispatchGen, DispatchID: dispatchID, Attempt: job.Attempts + 1})
	if err != nil {
		return true, fmt.Errorf("encode job %s: %w", job.ID, err) // cannot happen: plain fields
	}
	_, err = d.store.Dispatch(ctx, Dispatch{JobID: job.ID, From: job.State, Version: job.Version, DispatchID: dispatchID,
		Worker: workerID, Subject: WorkerSubject(workerID), MessageID: DispatchMessageID(job.ID, job.DispatchGen), Packet: packet})
	if err != nil {
		// An unknown outcome needs no confirming read: if the script ran, the
		// redelivery finds DISPATCHED and the relay has the entry.
		return d.settle(err, PhaseDispatchWrite)
	}
	d.metrics.written.WithLabelValues("dispatch").Inc()
	d.workers.noteDispatched(workerID)
	return true, nil
}

// settle maps a write's error to the handler's outcome: refused as stale ->
// read again; refused otherwise (terminal) -> done; unknown -> retry later.
func (d *Dispatcher) settle(err error, phase RetryPhase) (bool, error) {
	switch refusal(err) {
	case "":
		if err == nil {
			return true, nil
		}
		return true, d.retry(phase, d.cfg.StoreRetryDelay, err)
	case RefusedStale:
		return false, err
	default:
		return true, nil
	}
}

func jobFields(req JobRequest) []Field {
	return []Field{{"topic", req.Topic}, {"tenant", req.Tenant}, {"payload", string(req.Payload)}}
}

// createJob writes a new job as PENDING.
func (d *Dispatcher) createJob(ctx context.Context, req JobRequest) (*Job, error) {
	res, err := d.store.Transition(ctx, Transition{JobID: req.JobID, To: StatePending, Reason: "submit", Fields: jobFields(req)})
	if err != nil {
		return nil, err
	}
	return &Job{ID: req.JobID, Topic: req.Topic, Tenant: req.Tenant, Payload: req.Payload, State: StatePending,
		Version: res.Version}, nil
}

// rejectInvalid fails a request without a job id or topic. With an id, the
// job is stored FAILED with its DLQ entry; without one there is nothing to
// store, and the DLQ announcement queued in the outbox is the only record.
func (d *Dispatcher) rejectInvalid(ctx context.Context, req JobRequest) error {
	entry := &DLQEntry{JobID: req.JobID, Topic: req.Topic, Status: StateFailed, Reason: "job request without job id or topic",
		ReasonCode: ReasonInvalidRequest, AtMs: d.clock.Now().UnixMilli()}
	var err error
	if req.JobID != "" {
		_, err = d.store.Transition(ctx, Transition{JobID: req.JobID, To: StateFailed, Reason: string(ReasonInvalidRequest),
			DLQ: entry, Fields: jobFields(req)})
	} else {
		token := newToken(d.rand)
		data, _ := json.Marshal(entry) // plain fields: cannot fail
		err = d.store.Enqueue(ctx, OutboxEntry{ID: "dlq-invalid-" + token, Kind: "dlq", Subject: SubjectDLQ,
			MessageID: "dlq:invalid:" + token, Data: data})
	}
	switch {
	case IsTransitionRefused(err):
		return nil // the id belongs to a job that exists: leave it alone
	case err != nil:
		return d.retry(PhaseStore, d.cfg.StoreRetryDelay, err)
	}
	d.noteDLQ(entry)
	return nil
}

// recordPickFailure makes the failed pass count as an attempt (SCHEDULED, with
// the cause recorded so a DLQ entry at the cap names it) and retries with
// backoff. A topic with no pool is a configuration error: once it has lasted
// the grace window the job fails with it. Retried to the attempt cap instead,
// each unroutable job held a delivery in flight for about 25 minutes, and a
// broker's in-flight limit queued the next ones behind it past any bound.
func (d *Dispatcher) recordPickFailure(ctx context.Context, job *Job, pickErr error) (bool, error) {
	var se *SchedulingError
	if !errors.As(pickErr, &se) {
		return true, d.retry(PhasePick, d.backoff(job.Attempts), pickErr)
	}
	fields := []Field{{"last_error_code", string(se.Code)}, {"last_error", se.Detail}}
	if se.Code == ReasonNoPoolMappingTopic {
		since := job.PickFailSince
		if since.IsZero() && job.State == StateScheduled && job.LastErrorCode == se.Code {
			// The window opens where the pass that first recorded the cause
			// wrote SCHEDULED: a store stamp (another replica's pass, maybe),
			// and never before the job was scheduled.
			since = job.UpdatedAt
			fields = append(fields, Field{"pick_fail_since", strconv.FormatInt(since.UnixMilli(), 10)})
		}
		if !since.IsZero() {
			now, err := d.store.Now(ctx)
			if err != nil {
				return true, d.retry(PhaseStore, d.cfg.StoreRetryDelay, err)
			}
			if unresolved := now.Sub(since); unresolved >= d.cfg.NoPoolMappingGrace {
				return d.settle(d.failJob(ctx, job, se.Code, false,
					fmt.Sprintf("%s (unresolved for %s)", se.Detail, unresolved)), PhaseStore)
			}
		}
	} else if !job.PickFailSince.IsZero() {
		fields = append(fields, Field{"pick_fail_since", ""})
	}
	res, err := d.store.Transition(ctx, Transition{JobID: job.ID, From: job.State, Version: job.Version, To: StateScheduled,
		Reason: "pick failed: " + string(se.Code), Fields: fields})
	if err != nil {
		return d.settle(err, PhaseStore)
	}
	return true, d.retry(PhasePick, d.backoff(res.Attempts), pickErr)
}

// failJob moves the job to FAILED; its DLQ entry is stored and queued for
// announcement in the same script.
func (d *Dispatcher) failJob(ctx context.Context, job *Job, code ReasonCode, exhausted bool, reason string) error {
	entry := &DLQEntry{JobID: job.ID, Topic: job.Topic, Status: StateFailed, Reason: reason, ReasonCode: code,
		LastState: job.State, Attempts: job.Attempts, RetriesExhausted: exhausted, AtMs: d.clock.Now().UnixMilli()}
	_, err := d.store.Transition(ctx, Transition{JobID: job.ID, From: job.State, Version: job.Version, To: StateFailed,
		Reason: string(code), DLQ: entry})
	if err == nil {
		d.noteDLQ(entry)
	}
	return err
}

func (d *Dispatcher) noteDLQ(entry *DLQEntry) {
	d.metrics.dlq.WithLabelValues(string(entry.ReasonCode)).Inc()
	d.metrics.written.WithLabelValues("dlq").Inc()
}
