package engine

import "fmt"

// Bus subjects.
const (
	SubjectSubmit    = "sys.job.submit"
	SubjectResult    = "sys.job.result"
	SubjectCancel    = "sys.job.cancel"
	SubjectDLQ       = "sys.job.dlq"
	SubjectHeartbeat = "sys.heartbeat"
)

// Stream is one broker stream of the reference deployment: the subjects that
// share its storage and its duplicate window.
type Stream struct {
	Name     string
	Subjects []string // NATS subject patterns
}

// Streams is the reference deployment's topology: the scheduler's inbox
// (submit, result, cancel) in one stream, the dispatches in another (so a
// dispatch's id is de-duplicated against dispatches to every worker), then
// the DLQ and the heartbeats.
func Streams() []Stream {
	return []Stream{
		{Name: "DISPATCH_SCHEDULER", Subjects: []string{SubjectSubmit, SubjectResult, SubjectCancel}},
		{Name: "DISPATCH_JOBS", Subjects: []string{TopicSubject(">"), WorkerSubject("*")}},
		{Name: "DISPATCH_DLQ", Subjects: []string{SubjectDLQ}},
		{Name: "DISPATCH_HEARTBEAT", Subjects: []string{SubjectHeartbeat}},
	}
}

// WorkerSubject is the direct subject of one worker.
func WorkerSubject(workerID string) string { return "worker." + workerID + ".jobs" }

// TopicSubject is the shared subject of a topic.
func TopicSubject(topic string) string { return "job." + topic }

// DispatchMessageID is the broker de-duplication id of a job's dispatch. The first
// dispatch is jobreq:<jobID>; each legitimate re-dispatch after RETRYING gets its
// own id, so the broker drops a re-publish of the same dispatch and nothing else.
func DispatchMessageID(jobID string, gen int) string {
	if gen == 0 {
		return "jobreq:" + jobID
	}
	return fmt.Sprintf("jobreq:%s:%d", jobID, gen)
}

// JobRequest is a submitted job (sys.job.submit).
type JobRequest struct {
	JobID         string   `json:"job_id"`
	Topic         string   `json:"topic"`
	Tenant        string   `json:"tenant,omitempty"`
	PreferredPool string   `json:"preferred_pool,omitempty"`
	Requires      []string `json:"requires,omitempty"`
	Payload       []byte   `json:"payload,omitempty"`
}

// JobPacket is what a worker receives.
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

// Reason codes. A DLQ entry carries the root cause, never a generic
// max_scheduling_retries over a known cause (seed 003).
const (
	ReasonInvalidRequest         ReasonCode = "invalid_request"
	ReasonNoPoolMappingTopic     ReasonCode = "no_pool_mapping_topic"
	ReasonNoPoolMappingPreferred ReasonCode = "no_pool_mapping_preferred_pool"
	ReasonNoPoolMappingRequires  ReasonCode = "no_pool_mapping_requires"
	ReasonNoWorkers              ReasonCode = "no_workers"
	ReasonPoolOverloaded         ReasonCode = "pool_overloaded"
	ReasonTenantLimit            ReasonCode = "tenant_limit"
	ReasonPublishFailed          ReasonCode = "publish_failed"
	ReasonStoreError             ReasonCode = "store_error"
	ReasonMaxSchedulingRetries   ReasonCode = "max_scheduling_retries"
	ReasonJobFailed              ReasonCode = "job_failed"
	ReasonUnknownResult          ReasonCode = "unknown_result_status"
	ReasonDispatchTimeout        ReasonCode = "dispatch_timeout"
	ReasonRunningTimeout         ReasonCode = "running_timeout"
)

// DLQEntry is a dead-letter record, stored at dlq:entry:<jobID> and published on
// sys.job.dlq.
type DLQEntry struct {
	JobID      string     `json:"job_id"`
	Topic      string     `json:"topic"`
	Status     JobState   `json:"status"`
	Reason     string     `json:"reason"`
	ReasonCode ReasonCode `json:"reason_code"`
	LastState  JobState   `json:"last_state"`
	Attempts   int        `json:"attempts"`
	// RetriesExhausted marks an entry written at the retry cap; ReasonCode is then
	// the cause of the last retry.
	RetriesExhausted bool  `json:"retries_exhausted,omitempty"`
	AtMs             int64 `json:"at_ms"`
}
