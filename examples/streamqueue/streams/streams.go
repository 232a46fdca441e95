// Package streams is a job dispatcher on Redis Streams consumer groups. The
// gateway writes a job's record and adds an entry for it to the submit
// stream; each replica reads that stream in the "routers" group and routes
// the job to a pool: one script moves it to DISPATCHED under a new
// generation and adds a work entry to the pool's stream. Workers pull their
// pool's stream in the "workers" group (XREADGROUP) and acknowledge and
// delete an entry (XACK, XDEL) once its result is sent over the bus; the
// replicas apply results with a guard. A work entry older than the lease (its worker crashed, its
// job outlived the lease, or no worker read it in time) is taken back by a
// replica's reaper and its job put back, or timed out at the attempt cap:
// the lease counts from the dispatch (the entry's ID), not from the read,
// which XAUTOCLAIM's min-idle would. Routers do claim submit entries with
// XAUTOCLAIM: one a router left pending (it crashed, or no pool could take
// the job yet) is routed again after RouteRetry.
//
// A job is QUEUED, DISPATCHED (a worker may hold it; there is no running
// state), then SUCCEEDED, FAILED, TIMED_OUT or CANCELLED. Times in the
// store (the grace a job waits for a worker) are on the store's clock, and
// a stream entry's idle time is too.
//
// Everything nondeterministic is a port: a Clock, a Bus, a Random source and
// a Spawn for the loops; the package never starts a goroutine itself.
package streams

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
	Queued:     {Dispatched, Cancelled, Failed, Succeeded},
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

// Subjects, keys, groups and stream fields.
const (
	SubjectResults   = "sq.results"
	SubjectHeartbeat = "sq.heartbeat"
	JobPrefix        = "sq:job:"   // a hash: state, version, attempts, gen, dispatch_id, result_ptr, error_code, entry, ...
	DLQPrefix        = "sq:dlq:"   // a hash: job_id, status, reason_code, reason, last_state, attempts, retries_exhausted
	WorkPrefix       = "sq:work:"  // a stream per pool: job, gen, dispatch_id
	SubmitStream     = "sq:submit" // job
	PoolsKey         = "sq:pools"  // a set: every pool a job was routed to
	RoutersGroup     = "routers"
	WorkersGroup     = "workers"
)

// WorkStream is pool's stream of work entries.
func WorkStream(pool string) string { return WorkPrefix + pool }

// Defaults.
const (
	DefaultLease        = 5 * time.Minute
	DefaultReapInterval = 10 * time.Second
	DefaultMaxAttempts  = 10
	DefaultPickGrace    = 30 * time.Second
	PollInterval        = time.Second
	WorkerTTL           = 15 * time.Second
	// RouteRetry is how long an entry no pool could take stays pending
	// before a router claims it again.
	RouteRetry = 2 * time.Second
	batch      = 16
)

// Defect plants a known bug, for showing that a gate catches it.
type Defect string

// The planted defects ("" is the correct dispatcher).
const (
	// AckOnPull acknowledges (and deletes) a work entry as the worker pulls
	// it, before the job ran: a worker that crashes mid-job leaves nothing
	// for the reaper to take back, and the job is DISPATCHED for ever.
	AckOnPull Defect = "ack-on-pull"
	// ReapIgnoresLease takes every work entry back, however recently it
	// was dispatched: the reaper takes running jobs away and they are
	// dispatched again while their first run goes on.
	ReapIgnoresLease Defect = "reap-ignores-lease"
	// TerminalOverwrite applies a result to a job that already ended.
	TerminalOverwrite Defect = "terminal-overwrite"
	// DeadLetterHidesCause files the dead letter of a job no pool could take
	// under the retry cap's code, hiding why it failed (the job's own
	// error_code still says).
	DeadLetterHidesCause Defect = "dead-letter-hides-cause"
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

// Config is one replica's wiring and settings; zero settings are defaults.
type Config struct {
	Redis      redis.UniversalClient
	Bus        Bus
	Clock      Clock
	Random     interface{ Uint64() uint64 }
	Registerer prometheus.Registerer
	// Spawn starts a loop as concurrent work.
	Spawn func(name string, run func(ctx context.Context))
	// Name is the replica's consumer name in both groups.
	Name string
	// Routing maps topics to pools.
	Routing map[string][]string
	// Lease is the visibility timeout of a work entry: how long after its
	// dispatch it may go without its job ending. One for every topic.
	Lease        time.Duration
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
