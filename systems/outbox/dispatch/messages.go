package dispatch

import "fmt"

// Bus subjects, the same as engine/'s.
const (
	SubjectSubmit    = "sys.job.submit"
	SubjectResult    = "sys.job.result"
	SubjectCancel    = "sys.job.cancel"
	SubjectDLQ       = "sys.job.dlq"
	SubjectHeartbeat = "sys.heartbeat"
)

// WorkerSubject is the direct subject of one worker.
func WorkerSubject(workerID string) string { return "worker." + workerID + ".jobs" }

// DispatchMessageID is the broker de-duplication id of a job's dispatch: the
// first is jobreq:<jobID>, each re-dispatch after RETRYING gets its own. The
// relay publishes one outbox entry under one id however often it retries.
func DispatchMessageID(jobID string, gen int) string {
	if gen == 0 {
		return "jobreq:" + jobID
	}
	return fmt.Sprintf("jobreq:%s:%d", jobID, gen)
}

// DLQMessageID is the broker de-duplication id of a job's DLQ announcement.
func DLQMessageID(jobID string) string { return "dlq:" + jobID }

// JobRequest is a submitted job (sys.job.submit).
type JobRequest struct {
	JobID   string `json:"job_id"`
	Topic   string `json:"topic"`
	Tenant  string `json:"tenant,omitempty"`
	Payload []byte `json:"payload,omitempty"`
}

// JobPacket is what a worker receives on worker.<id>.jobs. DispatchID is what
// the worker hands to Consumer.Accept before it executes.
type JobPacket struct {
	JobID       string `json:"job_id"`
	Topic       string `json:"topic"`
	Tenant      string `json:"tenant,omitempty"`
	Payload     []byte `json:"payload,omitempty"`
	DispatchGen int    `json:"dispatch_gen"`
	DispatchID  string `json:"dispatch_id"`
	Attempt     int    `json:"attempt"`
}

// Worker result statuses.
const (
	ResultSucceeded       = "SUCCEEDED"
	ResultCompleted       = "COMPLETED"
	ResultFailed          = "FAILED"
	ResultFailedFatal     = "FAILED_FATAL"
	ResultFailedRetryable = "FAILED_RETRYABLE"
)

// JobResult is a worker's report (sys.job.result).
type JobResult struct {
	JobID       string `json:"job_id"`
	WorkerID    string `json:"worker_id"`
	Status      string `json:"status"`
	ResultPtr   string `json:"result_ptr,omitempty"`
	Error       string `json:"error,omitempty"`
	DispatchGen int    `json:"dispatch_gen"`
}

// CancelRequest cancels a job (sys.job.cancel).
type CancelRequest struct {
	JobID  string `json:"job_id"`
	Reason string `json:"reason,omitempty"`
}

// Heartbeat is a worker's load report (sys.heartbeat).
type Heartbeat struct {
	WorkerID    string  `json:"worker_id"`
	Pool        string  `json:"pool"`
	Active      int     `json:"active"`
	MaxParallel int     `json:"max_parallel"`
	CPU         float64 `json:"cpu"`
	GPU         float64 `json:"gpu"`
}

// ReasonCode names the root cause of a job's failure or of its last retry.
type ReasonCode string

// Reason codes; a DLQ entry at the retry cap names the last cause, never a
// generic max_scheduling_retries over a known one.
const (
	ReasonInvalidRequest       ReasonCode = "invalid_request"
	ReasonNoPoolMappingTopic   ReasonCode = "no_pool_mapping_topic"
	ReasonNoWorkers            ReasonCode = "no_workers"
	ReasonPoolOverloaded       ReasonCode = "pool_overloaded"
	ReasonMaxSchedulingRetries ReasonCode = "max_scheduling_retries"
	ReasonJobFailed            ReasonCode = "job_failed"
	ReasonUnknownResult        ReasonCode = "unknown_result_status"
	ReasonDispatchTimeout      ReasonCode = "dispatch_timeout"
	ReasonRunningTimeout       ReasonCode = "running_timeout"
)

// DLQEntry is a dead-letter record, stored at outbox:dlq:entry:<jobID> in the
// same script as the terminal state, and announced on sys.job.dlq by the relay.
type DLQEntry struct {
	JobID            string     `json:"job_id"`
	Topic            string     `json:"topic"`
	Status           JobState   `json:"status"`
	Reason           string     `json:"reason"`
	ReasonCode       ReasonCode `json:"reason_code"`
	LastState        JobState   `json:"last_state"`
	Attempts         int        `json:"attempts"`
	RetriesExhausted bool       `json:"retries_exhausted,omitempty"`
	AtMs             int64      `json:"at_ms"`
}
