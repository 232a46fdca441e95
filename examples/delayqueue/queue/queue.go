// Package queue is a Redis polling delay queue for jobs. The gateway
// writes a job's record and adds it to a ready set scored by its due time;
// each replica polls that set and claims due jobs with one script (no job
// lock), publishes each claimed dispatch to a worker under a message id of
// job and generation, and reaps dispatches whose lease ran out. Results come
// back over the bus and are applied only to the dispatch that produced them.
//
// A job is QUEUED, DISPATCHED (a worker holds it; there is no running state),
// then SUCCEEDED, FAILED, TIMED_OUT or CANCELLED. A retryable failure or an
// expired lease puts it back to QUEUED, until its attempts reach the cap.
//
// Everything nondeterministic is a port: a Clock, a Bus, a Random source and
// a Spawn for the loops; the package never starts a goroutine itself. Due
// times, leases and the grace are on the store's clock, which every replica
// shares; a replica's own clock only ages the heartbeats it heard.
package queue

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// The job states.
const (
	Queued     = "QUEUED"
	Dispatched = "DISPATCHED"
	Succeeded  = "SUCCEEDED"
	Failed     = "FAILED"
	TimedOut   = "TIMED_OUT"
	Cancelled  = "CANCELLED"
)

// States lists every state, terminal ones last.
var States = []string{Queued, Dispatched, Succeeded, Failed, TimedOut, Cancelled}

// Transitions is every move the scripts make ("" is a job not yet stored).
var Transitions = map[string][]string{
	"":         {Queued, Cancelled, Failed},
	Queued:     {Dispatched, Cancelled, Failed},
	Dispatched: {Succeeded, Failed, Queued, TimedOut, Cancelled},
}

// TerminalStates are the states nothing moves a job out of.
var TerminalStates = []string{Succeeded, Failed, TimedOut, Cancelled}

// Reason codes a DLQ entry and a job's error_code carry.
const (
	ReasonInvalidRequest  = "invalid_request"
	ReasonNoTopicPool     = "no_pool_mapping_topic"
	ReasonNoWorkers       = "no_workers"
	ReasonWorkerFailed    = "worker_failed"
	ReasonDispatchTimeout = "dispatch_timeout"
	ReasonMaxAttempts     = "max_attempts"
)

// Subjects and keys.
const (
	SubjectResults   = "dq.results"
	SubjectHeartbeat = "dq.heartbeat"
	WorkerPrefix     = "dq.worker."
	JobPrefix        = "dq:job:"       // a hash: state, version, attempts, gen, dispatch_id, result_ptr, error_code, ...
	DLQPrefix        = "dq:dlq:"       // a hash: job_id, status, reason_code, reason, last_state, attempts, retries_exhausted
	ReadyKey         = "dq:ready"      // job ids scored by due time (ms)
	DispatchedKey    = "dq:dispatched" // job ids scored by lease deadline (ms)
)

// WorkerSubject is where worker id receives its dispatches.
func WorkerSubject(id string) string { return WorkerPrefix + id }

// Defaults.
const (
	DefaultLease        = 5 * time.Minute
	DefaultReapInterval = 10 * time.Second
	DefaultMaxAttempts  = 10
	DefaultPickGrace    = 30 * time.Second
	PollInterval        = time.Second
	WorkerTTL           = 15 * time.Second
	waitRetry           = 2 * time.Second // an unplaceable job is looked at again after this
	claimBatch          = 16
)

// Defect plants a known bug, for showing that a gate catches it.
type Defect string

// The planted defects ("" is the correct queue).
const (
	PublishBeforeWrite Defect = "publish-before-write"
	TerminalOverwrite  Defect = "terminal-overwrite"
	StaleResultApplied Defect = "stale-result-applied"
	// TerminalRecordExpires keeps a job's record only a minute after it
	// ends, a retention shorter than the submit de-duplication the spec
	// promises: a submit sent again later makes the job again.
	TerminalRecordExpires Defect = "terminal-record-expires"
)

// Clock is a process's time; Sleep returns early with ctx's error.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Bus publishes a message under an id the broker de-duplicates.
type Bus interface {
	Publish(ctx context.Context, subject, id string, data []byte) error
}

// Config is one process's wiring and settings; zero settings are defaults.
type Config struct {
	Redis      redis.UniversalClient
	Bus        Bus
	Clock      Clock
	Random     interface{ Uint64() uint64 }
	Registerer prometheus.Registerer
	// Spawn starts a loop as concurrent work.
	Spawn func(name string, run func(ctx context.Context))
	// Routing maps topics to pools; requirements are not looked at.
	Routing map[string][]string
	// Lease is how long a dispatch may go without a result, per topic where
	// LeaseByTopic names one. Nothing extends a lease: it must cover the
	// longest job, or the job is dispatched again until its attempts run out.
	Lease        time.Duration
	LeaseByTopic map[string]time.Duration
	ReapInterval time.Duration
	MaxAttempts  int
	PickGrace    time.Duration
	Defect       Defect
}

func (c Config) withDefaults() Config {
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = DefaultReapInterval
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.PickGrace <= 0 {
		c.PickGrace = DefaultPickGrace
	}
	return c
}

// leaseOf is the lease of a topic's dispatches.
func (c Config) leaseOf(topic string) time.Duration {
	if d := c.LeaseByTopic[topic]; d > 0 {
		return d
	}
	return c.Lease
}

// Packet is a dispatch as a worker receives it.
type Packet struct {
	JobID      string `json:"job_id"`
	Topic      string `json:"topic"`
	Gen        int    `json:"dispatch_gen"`
	DispatchID string `json:"dispatch_id"`
	Attempt    int    `json:"attempt"`
}

// Result is a worker's report of one dispatch.
type Result struct {
	JobID      string `json:"job_id"`
	Gen        int    `json:"dispatch_gen"`
	DispatchID string `json:"dispatch_id"`
	WorkerID   string `json:"worker_id"`
	Outcome    string `json:"outcome"` // succeeded, failed, failed_retryable
	ResultPtr  string `json:"result_ptr"`
}

// Heartbeat is a worker's liveness report.
type Heartbeat struct {
	WorkerID string `json:"worker_id"`
	Pool     string `json:"pool"`
	Active   int    `json:"active"`
	Parallel int    `json:"parallel"`
}
