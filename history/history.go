// Package history is the record of a simulated run, as plain facts: what the
// store committed, what the broker stored, what workers ran, what clients saw,
// which faults fired. The simulator writes it; checkers and reports read it.
// It holds no system's types (states are strings, as the observer read them)
// and never imports the simulator or a system.
package history

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
)

// History is the ground truth of a run, recorded by the simulator from outside
// the engine: what the store applied, what the broker stored, what workers ran.
type History struct {
	Submitted  []SubmittedJob
	States     []StateChange
	Publishes  []PublishRecord
	Executions []Execution
	Faults     []FaultRecord
	Ops        []ClientOp
	Terminated []PublishRecord // messages that reached max deliver
	// Reports are the results workers delivered to the broker.
	Reports []WorkerReport
	// Routing is the routing in force, each entry from its Time on.
	Routing []RoutingChange
	// Locks are the job-lock commands the store applied, with who held the
	// lock after each.
	Locks []LockEvent
	// LockFailures are the job-lock commands that failed before the store
	// applied them.
	LockFailures []LockEvent
	// Scans are the sweeps' listings of stale jobs, as the store served them.
	Scans []Scan
	// Settles are the handlers' decisions on job messages (ack, NAK,
	// drop), taken when each handler returned.
	Settles []Settle
	// StoreLosses are the store breaking its own contract: acknowledged
	// writes it forgot (a failover to a copy that had not received them).
	StoreLosses []StoreLoss
	// BrokerLosses are the broker breaking its own contract: acknowledged
	// publishes forgotten in a crash.
	BrokerLosses []BrokerLoss
	// ReplicaSkew is how far each replica's clock ran from true time.
	ReplicaSkew []time.Duration
	Redis       RedisStats
	// FaultPhaseEnd is when the heal phase began.
	FaultPhaseEnd time.Duration
	// End is the virtual time the run stopped.
	End time.Duration
	// RunKeys are the run admission commands on idempotency keys' values,
	// as the store applied them.
	RunKeys []RunKeyCommand
	// RunCounts are each org's active runs after every change of them.
	RunCounts []RunCount
}

// SubmittedJob is a job a gateway client submitted; Accepted when the broker
// stored its request, or the gateway's own write stored the job. Topic is "" for a malformed request (one the system
// must refuse), Tenant "" for a job of no tenant.
type SubmittedJob struct {
	JobID    string
	Topic    string
	Tenant   string `json:",omitempty"`
	At       time.Duration
	Accepted bool
	Requires []string
	// Attempts are the times the client sent the submit, the first at At:
	// retries after an error, a lost reply or a late second thought.
	Attempts []time.Duration `json:",omitempty"`
}

// StateChange is one committed change of a job's stored state, observed in the
// store right after the command that made it.
type StateChange struct {
	Step    uint64
	Time    time.Duration
	Actor   string
	JobID   string
	From    string // "" for a job seen for the first time
	To      string
	Version int64
	// Token is the lock token the write was fenced with ("" unfenced), and
	// Holder the token that held the job's lock when the store applied it
	// ("" none: expired or never taken), in true time.
	Token, Holder string
	// Sent is when the command that made the change was issued, in true
	// time: a writer's clock was read no later, so a fault that delayed the
	// command (latency, a pause) sits between Sent and Time.
	Sent time.Duration
	// Gen, DispatchID and ResultPtr are the job's record right after the
	// change (sut.JobFact): the dispatch it is on and the result it
	// points at. The change before it in the history holds the dispatch
	// the job was on when this one was written.
	Gen        int    `json:",omitempty"`
	DispatchID string `json:",omitempty"`
	ResultPtr  string `json:",omitempty"`
}

// LockEvent is a command on a job's lock under Token (Op: take, renew,
// release) and its effect: whether Token held the lock after it, and until
// when in true time.
type LockEvent struct {
	Step  uint64
	Time  time.Duration
	Actor string
	JobID string
	Token string
	Op    sut.LockOp
	Held  bool
	Until time.Duration
	// Sent and SentStep are when the command was issued: what its issuer
	// did before it, it did by then.
	Sent     time.Duration
	SentStep uint64
	// Failed says the issuer saw an error: the reply was lost (Locks), or
	// the command never applied (LockFailures).
	Failed bool `json:",omitempty"`
}

// Scan is a sweep actor listing the jobs in State it deems stale.
type Scan struct {
	Step  uint64
	Time  time.Duration
	Actor string
	State string
}

// SettleOutcome is what a handler told the broker to do with a delivery.
type SettleOutcome string

// Settle outcomes.
const (
	SettleAck  SettleOutcome = "ack"
	SettleNak  SettleOutcome = "nak"
	SettleDrop SettleOutcome = "drop" // acked and dropped on an error
)

// SettleOf is the outcome a handler's answer asks of the broker.
func SettleOf(s sut.Settle) SettleOutcome {
	switch {
	case s.NakDelay > 0:
		return SettleNak
	case s.Dropped != nil:
		return SettleDrop
	}
	return SettleAck
}

// Settle is a handler's decision on a delivery of a job message, at the
// moment it returned: before the ack can be lost on its way.
type Settle struct {
	Step    uint64
	Time    time.Duration
	Actor   string
	Subject string
	MsgID   string
	JobID   string
	// Cancel marks a client's cancel request.
	Cancel  bool
	Outcome SettleOutcome
	// Delay is the redelivery delay a NAK asked for.
	Delay time.Duration `json:",omitempty"`
	// Gen and ResultPtr are what the message said (its sut.MessageFact):
	// the dispatch generation it names (the one a worker's result reports
	// on) and, for a result, where the result is ("" for other messages).
	Gen       int    `json:",omitempty"`
	ResultPtr string `json:",omitempty"`
	// Message is the digest of the message's bytes (MessageDigest), as
	// WorkerReport.Message holds it: for a worker's result, which report
	// the handler settled. 0 for a dispatch or a cancel.
	Message uint64 `json:",omitempty"`
}

// StoreLoss is the store forgetting every write it acknowledged after Since:
// at Time it came back as it was then. Jobs and RunKeys are the jobs and
// idempotency keys whose stored records the loss changed; every violation on
// them from Step on is the environment's, not the system's.
type StoreLoss struct {
	Step    uint64
	Time    time.Duration
	Since   time.Duration
	Keys    int // keys the loss changed
	Jobs    []string
	RunKeys []string
	// Inconsistent lists what the restored keyspace got wrong: a key not as
	// the copy held it (read by a second path), or a contradiction between
	// the system's own keys (sut.KeyspaceInvariants). Empty for a faithful
	// failover.
	Inconsistent []string `json:",omitempty"`
}

// Affects reports whether the loss changed the record of job or key id.
func (l StoreLoss) Affects(id string) bool {
	for _, x := range l.Jobs {
		if x == id {
			return true
		}
	}
	for _, x := range l.RunKeys {
		if x == id {
			return true
		}
	}
	return false
}

// BrokerLoss is the broker forgetting every message it stored after Since
// (acknowledged to the publisher, never flushed): at Time it came back
// without them. Jobs are the jobs whose messages (requests, dispatches,
// results, cancels) it lost; from Step on, what depends on those messages
// arriving is the environment's (checker.BrokerLossExcuses).
type BrokerLoss struct {
	Step     uint64
	Time     time.Duration
	Since    time.Duration
	Messages int
	Jobs     []string
}

// Affects reports whether the loss took a message of job id.
func (l BrokerLoss) Affects(id string) bool { return slices.Contains(l.Jobs, id) }

// WorkerReport is a result a worker's broker accepted: what the job record
// must show once the engine applied it.
type WorkerReport struct {
	Step       uint64
	Time       time.Duration
	Worker     string
	JobID      string
	Gen        int
	DispatchID string
	Outcome    string // sut.Outcome
	ResultPtr  string
	// Message is the digest of the result message's bytes (MessageDigest):
	// the settles of its deliveries carry the same.
	Message uint64 `json:",omitempty"`
}

// MessageDigest names a message by its bytes (FNV-64a), so a report and the
// settles of its deliveries can be matched.
func MessageDigest(data []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(data) // never fails
	return h.Sum64()
}

// RoutingChange is the routing in force from Time on: on every replica, or
// on Replica alone (a replica started on its own config).
type RoutingChange struct {
	Step    uint64
	Time    time.Duration
	Routing sut.Routing
	Replica string `json:",omitempty"`
}

// RoutingAt is the routing in force at t on replicas without their own (the
// last rollout at or before it).
func (h *History) RoutingAt(t time.Duration) sut.Routing { return h.RoutingOf("", t) }

// RoutingOf is the routing replica ran with at t: the last change at or before
// t that was a rollout to every replica or replica's own config.
func (h *History) RoutingOf(replica string, t time.Duration) sut.Routing {
	var r sut.Routing
	for _, c := range h.Routing {
		if c.Time > t {
			break
		}
		if c.Replica == "" || c.Replica == replica {
			r = c.Routing
		}
	}
	return r
}

// SkewSpread is the widest gap between two replicas' clocks (0 with one).
func (h *History) SkewSpread() time.Duration {
	if len(h.ReplicaSkew) == 0 {
		return 0
	}
	lo, hi := h.ReplicaSkew[0], h.ReplicaSkew[0]
	for _, s := range h.ReplicaSkew {
		lo, hi = min(lo, s), max(hi, s)
	}
	return hi - lo
}

// PublishOutcome is what the broker did with a publish.
type PublishOutcome string

// Publish outcomes.
const (
	PublishStored       PublishOutcome = "stored"
	PublishDeduplicated PublishOutcome = "deduplicated"  // dropped inside the broker's window
	PublishFailedClean  PublishOutcome = "failed_clean"  // not stored, error returned
	PublishFailedStored PublishOutcome = "failed_stored" // stored, error returned (ambiguous)
)

// PublishRecord is one publish attempt and the broker's ground truth about it.
type PublishRecord struct {
	Step    uint64
	Time    time.Duration
	Actor   string
	Subject string
	MsgID   string
	JobID   string
	Gen     int // dispatch generation, for job dispatches
	// Dispatch is the observer's fact: the message asks a worker to run the job.
	Dispatch bool
	Outcome  PublishOutcome
}

// Stored reports whether the broker kept the message.
func (p PublishRecord) Stored() bool {
	return p.Outcome == PublishStored || p.Outcome == PublishFailedStored
}

// Execution is a worker running a job: the side effect exactly-once is about.
// It runs from Time until End, in true time.
type Execution struct {
	Step       uint64
	Time       time.Duration
	Worker     string
	JobID      string
	Gen        int
	DispatchID string
	// End and EndStep are when the worker stopped running the job: it
	// finished the work (before it reported, so a late result does not
	// lengthen it), or its process crashed (Crashed). Zero: it was still
	// running when the run stopped.
	End     time.Duration `json:",omitempty"`
	EndStep uint64        `json:",omitempty"`
	Crashed bool          `json:",omitempty"`
}

// FaultRecord is a fault that fired.
type FaultRecord struct {
	Step   uint64
	Time   time.Duration
	Actor  string
	Kind   string
	Effect Effect
	Also   []Effect `json:",omitempty"` // further effects at the same point
	Point  PointKind
	Target string // command and key, subject, or job
}

// OpKind names a client-visible operation.
type OpKind string

// Client operations.
const (
	OpSubmit   OpKind = "submit"
	OpStatus   OpKind = "status"
	OpCancel   OpKind = "cancel"
	OpStartRun OpKind = "start_run"
)

// ClientOp is one client call with its invocation and return, for the
// linearizability checks. A call whose outcome is unknown has Unknown set.
type ClientOp struct {
	Client   int
	Kind     OpKind
	Key      string // job id, or idempotency key
	Input    string
	Output   string
	Status   int
	Call     time.Duration
	Return   time.Duration
	CallStep uint64
	RetStep  uint64
	Unknown  bool
	// Org and Workflow are what a start_run asked for, InputBytes its
	// body's length (Input keeps only the start of an oversized body).
	Org, Workflow string
	InputBytes    int
}

// RedisStats counts store commands.
type RedisStats struct {
	Commands int
	Scripts  int
	Faulted  int
	// FailedJobReads counts replica reads of a job that returned an error.
	FailedJobReads int
}

// PointKind names a fault point of the simulator.
type PointKind string

// The fault points.
const (
	PointRedis   PointKind = "redis"   // before a store command of an engine or gateway actor
	PointPublish PointKind = "publish" // before a bus publish
	PointDeliver PointKind = "deliver" // the bus hands a message to a subscriber
	PointAck     PointKind = "ack"     // a handler returned; the ack is about to reach the broker
	PointWorker  PointKind = "worker"  // a worker finished a job and is about to report it
	PointClient  PointKind = "client"  // a client's submit was applied and its reply is on the way back
)

// Effect is what the simulator does when a fault fires.
type Effect string

// The effects the simulator can apply. Which effects apply at which point:
// Redis: FailBeforeApply, ReplyLostAfterApply, Delay, Crash, CrashAfterApply, Pause.
// Publish: FailClean, FailStored, Delay, Crash. Deliver: Duplicate, Delay.
// Ack: AckLost, Crash. Worker: Crash, DuplicateResult, Delay, RetryableAfterSuccess.
// Client: ReplyLostAfterApply (the client retries as after an error), Delay
// (the client sends its landed request again that much later).
const (
	EffectFailBeforeApply     Effect = "fail_before_apply"
	EffectReplyLostAfterApply Effect = "reply_lost_after_apply"
	EffectDelay               Effect = "delay"
	// EffectAckLate holds an ack until the ack wait plus the fault's
	// duration has passed.
	EffectAckLate               Effect = "ack_late"
	EffectCrash                 Effect = "crash"
	EffectCrashAfterApply       Effect = "crash_after_apply"
	EffectPause                 Effect = "pause"
	EffectFailClean             Effect = "fail_clean"
	EffectFailStored            Effect = "fail_stored"
	EffectDuplicate             Effect = "duplicate"
	EffectAckLost               Effect = "ack_lost"
	EffectDuplicateResult       Effect = "duplicate_result"
	EffectRetryableAfterSuccess Effect = "retryable_after_success"
	// EffectRetryableResult: the worker reports a retryable failure whatever
	// the job did (a dependency outage, a window of them).
	EffectRetryableResult Effect = "retryable_result"
)

// BusConfig is the simulated broker's behaviour, modelled on a JetStream
// deployment. Zero values mean the defaults noted.
type BusConfig struct {
	// Dedup drops a publish whose message id was stored within DedupWindow
	// on the same stream.
	Dedup       bool
	DedupWindow time.Duration // 2m
	AckWait     time.Duration // 10m: an unacked delivery comes back after this
	MaxDeliver  int           // 100: then the message is terminated
	// MaxAckPending caps a consumer's unsettled deliveries (1000): new
	// messages wait while it is reached; redeliveries do not.
	MaxAckPending int
	// Streams is the deployment's topology: which subjects share a stream,
	// and so a duplicate window. A publish to a subject no stream holds
	// fails. Nil: the system's declared streams (sut.Spec.Streams), else
	// one stream holding every subject.
	Streams []sut.Stream
	// SplitStreams deploys every subject in a stream of its own: a message
	// id is de-duplicated against its own subject only.
	SplitStreams bool
}

// Topology describes the streams for people: "NAME[subject ...] ...", and
// whether every subject is split into a stream of its own.
func (c BusConfig) Topology() string {
	var b strings.Builder
	for i, s := range c.WithDefaults().Streams {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s[%s]", s.Name, strings.Join(s.Subjects, " "))
	}
	if c.SplitStreams {
		b.WriteString(", split: a stream per subject")
	}
	return b.String()
}

// StreamOf names the stream that holds subject ("" when none does): under
// SplitStreams, the subject's own within the declared stream holding it.
func (c BusConfig) StreamOf(subject string) string {
	for _, s := range c.WithDefaults().Streams {
		if !s.Holds(subject) {
			continue
		}
		if c.SplitStreams {
			return s.Name + "/" + subject
		}
		return s.Name
	}
	return ""
}

// AllSubjects is the topology of one stream holding every subject.
var AllSubjects = []sut.Stream{{Name: "ALL", Subjects: []string{">"}}}

// WithDefaults fills in the zero values.
func (c BusConfig) WithDefaults() BusConfig {
	if c.DedupWindow == 0 {
		c.DedupWindow = 2 * time.Minute
	}
	if c.AckWait == 0 {
		c.AckWait = 10 * time.Minute
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 100
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = 1000
	}
	if c.Streams == nil {
		c.Streams = AllSubjects
	}
	return c
}

// AdmissionSnapshot is the run admission state left in the store at the end.
type AdmissionSnapshot = sut.AdmissionState

// RunRequestTimeout is how long a run client waits for a reply before it
// counts the request as unanswered (outcome unknown).
const RunRequestTimeout = 10 * time.Second

// Run replies a client can tell apart in a 409.
const (
	RunReplyInFlight = sut.RunInFlight
	RunReplyMismatch = sut.RunMismatch
	RunReplyUsed     = sut.RunUsed
)

// StateOrNone names a state for people: "<none>" before the first.
func StateOrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
