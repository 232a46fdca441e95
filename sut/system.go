package sut

import (
	"context"
	"errors"
	"time"
)

// System is a dispatcher the simulator can host.
type System interface {
	Name() string
	// Spec is what the system promises, for the checkers.
	Spec(o Options) Spec
	Observer() Observer
	// StartReplica boots one scheduler replica (again after a crash).
	StartReplica(p Ports, o Options) (Replica, error)
	// StartGateway builds the client-facing API on the gateway's ports.
	StartGateway(p Ports, o Options) (Gateway, error)
	Worker() WorkerProtocol
}

// Replica is a running scheduler process.
type Replica interface {
	Subscriptions() []Subscription
	// SetRouting is a configuration rollout.
	SetRouting(r Routing)
}

// Job is what a client submits. Tenant is whom the job runs for (""
// none): a system may cap a tenant's jobs in flight (Options.TenantMaxActive).
type Job struct {
	ID, Topic string
	Tenant    string
	Requires  []string
}

// ErrNotFound is Status's answer for a job the store does not hold.
var ErrNotFound = errors.New("sut: job not found")

// Gateway is the client API. Each call is one attempt; clients retry.
type Gateway interface {
	Submit(ctx context.Context, j Job) error
	Cancel(ctx context.Context, jobID string) error
	// Status is the job's state as a client reads it, or ErrNotFound.
	Status(ctx context.Context, jobID string) (string, error)
}

// Admission is optional run admission (a Gateway may implement it): workflow
// runs started under an idempotency key and an org's concurrency limit.
type Admission interface {
	// RegisterWorkflow binds a workflow to its org: nil when it is (now or
	// already) the org's, ErrWorkflowOrgConflict when another org holds it,
	// ErrInvalidRequest for an empty org or workflow id.
	RegisterWorkflow(ctx context.Context, org, workflowID string) error
	// StartRun is one start request as a client sends it over the API: an
	// empty org or key is a missing header, the payload is the body as sent.
	StartRun(ctx context.Context, org, workflowID, key string, payload []byte) RunReply
	// SetOrgRunLimit sets an org's max concurrent runs; n <= 0 is no limit
	// (the org is never turned away with 429).
	SetOrgRunLimit(ctx context.Context, org string, n int) error
	CompleteRun(ctx context.Context, org, runID string) error
	SweepStaleReservations(ctx context.Context) (int, error)
	StaleReservationAfter() time.Duration
}

// ForeignRunKeys is optional for an Admission: values another writer left
// under idempotency keys (an older gateway, another deployment, a botched
// migration), which the system promises never to resolve: a start with such
// a key is refused with 409 RunUsed, and the value stays as it is.
type ForeignRunKeys interface {
	// ForeignRunKeyValues are such values, as the other writer stored them.
	ForeignRunKeyValues() []string
	// PlantRunKey stores value under key as that writer did.
	PlantRunKey(ctx context.Context, key, value string) error
}

// RunReply is a start-run reply as the client sees it.
type RunReply struct {
	Status int    // HTTP status
	RunID  string // with 200
	// Conflict tells a 409 apart: RunInFlight, RunMismatch or RunUsed.
	Conflict string
}

// Workflow registration errors a run admission reports.
var (
	ErrWorkflowOrgConflict = errors.New("sut: workflow registered to another org")
	ErrInvalidRequest      = errors.New("sut: invalid request")
)

// The 409 reasons a run client can tell apart.
const (
	RunInFlight = "in_flight"
	RunMismatch = "mismatch"
	RunUsed     = "used"
)

// WorkerProtocol is how a worker talks to the system.
type WorkerProtocol interface {
	// Subject is where worker id receives dispatches.
	Subject(workerID string) string
	DecodeDispatch(data []byte) (Dispatch, error)
	// Result is the message reporting a dispatch's outcome.
	Result(d Dispatch, workerID string, o Outcome) (subject string, m Message)
	Heartbeat(hb Heartbeat) (subject string, m Message)
}

// HeartbeatReader is optional for a WorkerProtocol: it reads a heartbeat
// message back, so the harness can record the load a replica was told.
type HeartbeatReader interface {
	ReadHeartbeat(data []byte) (Heartbeat, error)
}

// Dispatch is one message telling a worker to run a job.
type Dispatch struct {
	JobID string
	Gen   int
	// ID identifies the dispatch; an idempotent consumer runs an ID once.
	ID string
}

// Outcome is a worker's report of one execution.
type Outcome string

// Outcomes a worker reports.
const (
	Succeeded       Outcome = "succeeded"
	Failed          Outcome = "failed"
	FailedRetryable Outcome = "failed_retryable"
)

// Heartbeat is a worker's load report.
type Heartbeat struct {
	WorkerID, Pool   string
	Active, Parallel int
	CPU, GPU         float64
}

// IdempotentConsumer is optional for a WorkerProtocol: a store-backed gate a
// worker asks before it runs a dispatch, either de-duplicating (run once) or
// fencing (run only while the store still names the dispatch current). It
// outlives the worker's restarts, where the simulator's in-memory
// de-duplication does not.
type IdempotentConsumer interface {
	Consumer(p Ports) (DispatchGate, error)
}

// DispatchGate admits a dispatch, or refuses it (false: acked, not run).
type DispatchGate interface {
	First(ctx context.Context, d Dispatch) (bool, error)
}
