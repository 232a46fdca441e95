package sut

import (
	"math"
	"time"
)

// Spec is what a system promises, as data the checkers hold a run to.
type Spec struct {
	States   []string
	Terminal []string
	// Transitions maps a state ("" for none yet) to the states it may move to.
	Transitions map[string][]string
	// Dispatched is the state a job is in while a worker may run it, Retrying
	// the state that earns one more dispatch generation, and Scheduled the
	// state each attempt passes through (the attempt rule: attempts = number
	// of moves into Scheduled).
	Dispatched, Retrying, Scheduled string
	// AttemptsFrom are the states a move into Scheduled counts an attempt
	// from (nil: every state, Scheduled itself included, as Cordum counts).
	// A system that does not charge a dispatch a crash or an expired lease
	// ended (a move from Dispatched or Running back to Scheduled) leaves
	// those states out; the attempt and retry-cap checks follow it.
	AttemptsFrom []string
	// Running is the state a job is in once a worker reported it started.
	Running string
	// CompoundSteps maps a state to the state every write into it passes
	// through in the same script: the move is observed as one, and is checked
	// and counted as the two.
	CompoundSteps map[string]string
	// Succeeded, Cancelled, Failed and TimedOut name those outcomes.
	Succeeded, Cancelled, Failed, TimedOut string
	// DispatchTimeout and ReconcileInterval bound how long a job may stay
	// Dispatched; DispatchTimeoutByTopic replaces DispatchTimeout for the
	// topics it names.
	DispatchTimeout, ReconcileInterval time.Duration
	DispatchTimeoutByTopic             map[string]time.Duration
	// RunningTimeout bounds how long a job may stay Running; with
	// DispatchTimeout it is the lower bound of a timeout in true time.
	RunningTimeout time.Duration
	// MaxSchedulingRetries is the attempt count at which a job fails with
	// its retries exhausted, never before.
	MaxSchedulingRetries int
	// NoRouteFailsAtOnce: a job no pool of its topic can take fails at once
	// with its reason code, rather than being retried for a route to come
	// (PickGrace is then 0). A legal choice, which leaves no window for a
	// late pool mapping: cases whose point is that window do not apply.
	NoRouteFailsAtOnce bool
	// PickGrace is how long a permanent routing cause is retried before the
	// job fails with it (0: the system has no such window); GraceReasons
	// are the DLQ reason codes that end it.
	PickGrace    time.Duration
	GraceReasons []string
	// BackoffMax bounds the delay before a retry after a failed pick or
	// publish, jitter included (0: unknown).
	BackoffMax time.Duration
	// BackoffBase and BackoffJitter are the rest of that delay's rule:
	// min(BackoffBase<<n + jitter, BackoffMax), the jitter drawn below
	// BackoffJitter, so retries of jobs that failed together spread out
	// (0: no such rule).
	BackoffBase, BackoffJitter time.Duration
	// ReasonTopicMissing and ReasonRequiresUnsatisfied are the DLQ reason
	// codes for a topic with no pool and for a job no pool of its topic
	// can take ("" when the system has no such code).
	ReasonTopicMissing, ReasonRequiresUnsatisfied string
	// RetryCapReason is the DLQ reason code of a job that hit the retry cap;
	// it must never hide a recorded cause ("" when the system has none).
	RetryCapReason string
	// ReasonWorkerFailed is the reason code a job records when it failed
	// because its worker reported a failure ("" when the system has none).
	ReasonWorkerFailed string
	// ReasonDispatchTimeout and ReasonRunningTimeout are the DLQ reason codes
	// of a job timed out from Dispatched and from Running ("": none).
	ReasonDispatchTimeout, ReasonRunningTimeout string
	// ReasonInvalidRequest is the DLQ reason code of a job request the
	// system refuses as malformed, one without a topic: it fails the job and
	// never dispatches it ("" when the system has no such code).
	ReasonInvalidRequest string
	// TenantMaxActive caps each tenant it names: the system dispatches a
	// job of that tenant only while fewer than the cap of the tenant's jobs
	// are in a TenantActive state (nil: no caps). ReasonTenantLimit is the
	// DLQ reason code of a job that could not be placed under its tenant's
	// cap. In a world whose replicas run different caps the world's spec
	// holds the loosest: the largest, or NoTenantCap where a replica caps
	// the tenant not at all.
	TenantMaxActive   map[string]int
	TenantActive      []string
	ReasonTenantLimit string
	// DLQSubject is the bus subject a stored dead-letter entry is announced
	// on, by the handler that stored it ("" when the system announces none).
	DLQSubject string
	// Requires is true when the system sends a job only to pools offering
	// every capability it requires (false: it ignores requirements).
	Requires bool
	// Overload says when the system deems a worker too loaded to take a job
	// (zero: it places jobs without load rules).
	Overload Overload
	// LeastLoaded says the system sends a job to the live, not overloaded
	// worker of its eligible pools with the lowest load score, running jobs
	// plus CPU and GPU percent over 100, ties to the lowest worker id; a
	// worker is live for WorkerTTL after its last heartbeat, and each dispatch
	// a replica makes counts as one more running job in that replica's view
	// until the worker's next heartbeat.
	LeastLoaded bool
	WorkerTTL   time.Duration
	// RepublishKeepsWorker: a dispatch re-published under its first
	// message id goes to the worker the first copy went to while that
	// worker is live and not overloaded, whatever the least-loaded rule
	// says (the broker drops a copy only on the stream of the first).
	RepublishKeepsWorker bool
	// RunAdmission is true when the gateway admits workflow runs (Admission).
	RunAdmission bool
	// RunRequests are the limits a run start is held to before admission.
	RunRequests RunRequestLimits
	// RunLimit is an org's max concurrent runs unless it was set otherwise
	// (0: none).
	RunLimit int
	// RunAdmissionWait is how long a start of an org with a limit waits for
	// the org's turn before it is refused as busy (503).
	RunAdmissionWait time.Duration
	// StaleReservationAfter is how old a reservation whose run never came to
	// exist must be, in true time, before the system may take it from its
	// holder (a retry's takeover, the sweeper).
	StaleReservationAfter time.Duration
	// JobLock is true when the system serialises work on a job by a lock.
	JobLock bool
	// LockRenewFailures is how many failed renewals in a row make a section
	// give its lock up (it also does once a renewal finds the lock gone);
	// renewals run as actors of their own, not the section's (0: no such rule).
	LockRenewFailures int
	// WorkersDedupDurably is true when the system's worker-side consumer
	// remembers what it ran across worker restarts (a store-backed idempotent
	// consumer): one stored message run twice is then the worker's fault.
	WorkersDedupDurably bool
	// WorkerGate is what a worker asks the store before it runs a dispatch,
	// through its protocol's IdempotentConsumer: nothing (GateNone), a read
	// (GateRead, a fence on the job's current dispatch), or a write that
	// claims the dispatch (GateClaim). Fault kinds aim at those commands.
	WorkerGate Gate
	// WorkersPull is true when workers pull their dispatches from the store
	// (their protocol is a sut.Puller): no dispatch goes over the bus, so
	// nothing can publish one twice, and replicas publish only what else
	// they announce (DLQSubject).
	WorkersPull bool
	// PublishFromRelay is true when dispatches are published after the state
	// commit, by a relay, rather than by the handler that wrote the state.
	PublishFromRelay bool
	// Metrics names the counters the accounting checks compare with ground
	// truth ("" when the system has none).
	Metrics Metrics
	// Sweeps are the background passes that list stale jobs and work on
	// them (a reconciler, a replayer). None: not checked.
	Sweeps []Sweep
	// Cancels says who writes a client's cancel into the store: a replica
	// handling the cancel message the client published (CancelByReplica, the
	// zero value), or the gateway directly (CancelByGateway), in which case no
	// replica ever writes a cancel and no fault can aim at one.
	Cancels CancelWriter
	// Delivery is what the system promises about the dispatches a job's
	// generation gets: ExactlyOnce (the zero value), or
	// AtLeastOnceIdempotentConsumer, under which the broker may store a
	// generation's message more than once and the system's own store-backed
	// consumer (its worker protocol's sut.IdempotentConsumer) makes each
	// dispatch run at most once.
	Delivery Delivery
	// SubmitDedupWindow is how long after a job's first submit a submit of
	// the same job id (a retry after a lost reply, a client's late second
	// try) is promised to make no second job: SubmitDedupForever for as long
	// as the system keeps the job's record, 0 for no such promise.
	SubmitDedupWindow time.Duration
	// DLQReasons are the DLQ reason codes the system may file besides those
	// the fields above name (no_workers, pool_overloaded, ...): with them,
	// the spec names every code it files, so a suite asks some seed to reach
	// dlq_<code> only of a system that has the code.
	DLQReasons []string
	// RedispatchAfterLease is true when a dispatch whose lease (the
	// dispatch timeout of its topic) ran out is dispatched again without
	// waiting for the first to end, as a queue with a visibility timeout
	// does: two dispatches of one job may then run at once, but only once
	// the later was dispatched a whole lease after the earlier (false: they
	// never overlap).
	RedispatchAfterLease bool
	// Clocks says whose clock the system measures a duration on when one
	// process starts it and another judges it (a timeout, a grace window, a
	// sweep's staleness): the store's (StoreClock, the zero value), so skew
	// between replicas cannot shorten it; or each replica's own
	// (ReplicaClocks), a flaw the system could avoid, declared so the
	// timing checks excuse the widest gap between replica clocks, and the
	// reports say they did.
	Clocks Clocks
	// ReplicaWritesPerJob is about how many store writes the replicas make
	// per job over a run without faults, background passes included (0:
	// unknown, taken to be as many as Cordum's engine makes, which the fault
	// catalog's per-write rates were set for). A fault kind drawn per write
	// fires that much more often for a system that writes less, so it still
	// fires over a suite's seeds.
	ReplicaWritesPerJob int
	// Streams is the broker topology the system is deployed with: which
	// subjects share a stream, and so a duplicate window (nil: one stream
	// holding every subject). Worlds may deploy it otherwise
	// (history.BusConfig), to show what the system relies on.
	Streams []Stream
}

// SubmitDedupForever is a submit de-duplication window without end: a
// submitted job id is never made a job again (Spec.SubmitDedupWindow).
const SubmitDedupForever time.Duration = math.MaxInt64

// CancelWriter says who writes a client's cancel (Spec.Cancels).
type CancelWriter string

// Who writes cancels.
const (
	// CancelByReplica: a replica's handler writes the cancel it was sent.
	CancelByReplica CancelWriter = ""
	// CancelByGateway: the gateway writes the cancel itself.
	CancelByGateway CancelWriter = "gateway"
)

// Clocks is whose clock a system measures cross-process durations on
// (Spec.Clocks).
type Clocks string

// The clocks a system may measure on.
const (
	// StoreClock: every time one process stamps and another judges is the
	// store's.
	StoreClock Clocks = ""
	// ReplicaClocks: each replica stamps and judges on its own clock.
	ReplicaClocks Clocks = "replica clocks"
)

// Gate is what a worker's dispatch gate does in the store (Spec.WorkerGate).
type Gate string

// The worker gates.
const (
	GateNone  Gate = ""
	GateRead  Gate = "read"
	GateClaim Gate = "claim"
)

// Delivery is a system's delivery promise (Spec.Delivery).
type Delivery string

// The delivery promises.
const (
	// ExactlyOnce: each dispatch generation is stored by the broker once and
	// run once.
	ExactlyOnce Delivery = ""
	// AtLeastOnceIdempotentConsumer: a generation's message may be stored
	// more than once (a relay re-publishes what it is not sure went out);
	// the system's store-backed consumer runs each dispatch at most once.
	AtLeastOnceIdempotentConsumer Delivery = "at-least-once, idempotent consumer"
)

// String names the promise.
func (d Delivery) String() string {
	if d == ExactlyOnce {
		return "exactly once"
	}
	return string(d)
}

// HasTenantCaps reports whether the system can cap tenants' active jobs: it
// names the states a cap counts (TenantActive). Whether a world caps any
// tenant is TenantMaxActive's.
func (s Spec) HasTenantCaps() bool { return len(s.TenantActive) > 0 }

// HasReason reports whether the system may file DLQ reason code.
func (s Spec) HasReason(code string) bool {
	if code == "" {
		return false
	}
	named := []string{s.ReasonTopicMissing, s.ReasonRequiresUnsatisfied, s.RetryCapReason, s.ReasonWorkerFailed,
		s.ReasonDispatchTimeout, s.ReasonRunningTimeout, s.ReasonInvalidRequest}
	if s.HasTenantCaps() {
		named = append(named, s.ReasonTenantLimit)
	}
	for _, list := range [][]string{named, s.GraceReasons, s.DLQReasons} {
		for _, c := range list {
			if c == code {
				return true
			}
		}
	}
	return false
}

// Sweep is a background pass that lists the jobs of States untouched for
// After (0: the state's timeout, the shortest dispatch timeout of any topic
// for Dispatched and RunningTimeout for Running) and takes their locks. It
// runs as the replica actor named Actor.
type Sweep struct {
	Actor  string
	States []string
	After  time.Duration
}

// NoTenantCap in Spec.TenantMaxActive names a tenant some replica caps and
// another does not: a cap no dispatch is held to, still a tenant whose jobs
// may fail on the cap.
const NoTenantCap = math.MaxInt

// RunRequestLimits are what a run start must keep to before the gateway looks
// at the store. A start without an org, with a key longer than MaxKeyBytes
// or with a body that is not one JSON object is refused with 400, one whose
// body is longer than MaxBodyBytes with 413; each is answered at once and
// changes nothing. Zero: the system makes no such promise.
type RunRequestLimits struct {
	MaxBodyBytes, MaxKeyBytes int
}

// Overload are the load levels at or above which a worker takes no new job,
// as its heartbeats report them: running jobs over its parallel limit, and
// CPU and GPU use in percent. Zero: no such rule.
type Overload struct {
	LoadRatio, CPU, GPU float64
}

// Metrics are counter names.
type Metrics struct {
	Rollbacks, RollbackFailures, FailClosedReads, Published string
	// LockFenced counts the sections that gave their lock up.
	LockFenced string
	// RedeliverySkipped counts the job requests a handler acked without
	// work because the job was already dispatched, running or done; they
	// arrive on RequestSubject.
	RedeliverySkipped, RequestSubject string
	// Withheld are the counters that together count the dispatches a
	// handler wrote and then did not publish (a parked re-publish, a lock
	// lost before the publish, a write whose outcome stayed unknown), each
	// with the label values whose series count (nil: every series).
	Withheld map[string][]string
	// Branches maps a counter to the risky branch it counts, for coverage
	// ("publish_rollback"). A counter with a state label counts
	// "<branch>_of_terminal" or "<branch>_in_flight" by that state.
	Branches map[string]string
	// RejectedRuns is the run admission counter, one series per reply's
	// status (label "code"); its code="429" series counts the admission's
	// cleanups after a refusal.
	RejectedRuns string
	// CleanupFailures counts the reservations the gateway failed to free
	// after a refused start (any labels, summed).
	CleanupFailures string
}

// IsTerminal reports whether state is terminal.
func (s Spec) IsTerminal(state string) bool {
	for _, t := range s.Terminal {
		if t == state {
			return true
		}
	}
	return false
}

// Allowed reports whether from -> to is in the transition graph, directly
// or as a compound step.
func (s Spec) Allowed(from, to string) bool {
	if s.edge(from, to) {
		return true
	}
	via, ok := s.CompoundSteps[to]
	return ok && s.edge(from, via) && s.edge(via, to)
}

func (s Spec) edge(from, to string) bool {
	for _, t := range s.Transitions[from] {
		if t == to {
			return true
		}
	}
	return false
}

// ChargesAttempt reports whether the observed move from -> to counts an
// attempt: it enters Scheduled (on its own or as the middle of a compound
// step) from a state AttemptsFrom names, or from any state when it names
// none.
func (s Spec) ChargesAttempt(from, to string) bool {
	if !s.Entered(from, to, s.Scheduled) {
		return false
	}
	if s.AttemptsFrom == nil {
		return true
	}
	for _, st := range s.AttemptsFrom {
		if st == from {
			return true
		}
	}
	return false
}

// Entered reports whether the observed move from -> to entered state, on
// its own or as the middle of a compound step.
func (s Spec) Entered(from, to, state string) bool {
	return to == state || s.CompoundSteps[to] == state
}
