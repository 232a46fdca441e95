package sim

import (
	"time"

	"github.com/dispatchsim/dispatchsim/engine"
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
	Redis      RedisStats
	// FaultPhaseEnd is when the heal phase began.
	FaultPhaseEnd time.Duration
	// End is the virtual time the run stopped.
	End time.Duration
}

// SubmittedJob is a job a gateway client submitted; Accepted when the broker
// stored its request.
type SubmittedJob struct {
	JobID    string
	Topic    string
	At       time.Duration
	Accepted bool
}

// StateChange is one committed change of a job's stored state, observed in the
// store right after the command that made it.
type StateChange struct {
	Step    uint64
	Time    time.Duration
	Actor   string
	JobID   string
	From    engine.JobState
	To      engine.JobState
	Version int64
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
	Outcome PublishOutcome
}

// Stored reports whether the broker kept the message.
func (p PublishRecord) Stored() bool {
	return p.Outcome == PublishStored || p.Outcome == PublishFailedStored
}

// Execution is a worker running a job: the side effect exactly-once is about.
type Execution struct {
	Step       uint64
	Time       time.Duration
	Worker     string
	JobID      string
	Gen        int
	DispatchID string
}

// FaultRecord is a fault that fired.
type FaultRecord struct {
	Step   uint64
	Time   time.Duration
	Actor  string
	Kind   string
	Effect Effect
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
}

// RedisStats counts store commands.
type RedisStats struct {
	Commands int
	Scripts  int
	Faulted  int
	// FailedJobReads counts replica reads of a job that returned an error.
	FailedJobReads int
}
