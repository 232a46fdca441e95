package sim

import "time"

// PointKind names a fault point of the simulator.
type PointKind string

// The fault points.
const (
	PointRedis   PointKind = "redis"   // before a store command of an engine or gateway actor
	PointPublish PointKind = "publish" // before a bus publish
	PointDeliver PointKind = "deliver" // the bus hands a message to a subscriber
	PointAck     PointKind = "ack"     // a handler returned; the ack is about to reach the broker
	PointWorker  PointKind = "worker"  // a worker finished a job and is about to report it
)

// Point describes where the simulator is asking for a fault.
type Point struct {
	Kind  PointKind
	Step  uint64
	Time  time.Duration
	Actor string
	Group string // "replica-1", "worker-w2", "gateway", "client"

	// Redis
	Cmd   string // lower-case command name
	Key   string // first key, if any
	Args  []any
	Write bool // the command may change data (scripts count as writes)

	// Bus
	Subject  string
	MsgID    string
	JobID    string // the job a dispatch, request or result is about
	Delivery int    // delivery count of the message (1 = first)
}

// Effect is what the simulator does when a fault fires.
type Effect string

// The effects the simulator can apply. Which effects apply at which point:
// Redis: FailBeforeApply, ReplyLostAfterApply, Delay, Crash, CrashAfterApply, Pause.
// Publish: FailClean, FailStored, Delay, Crash. Deliver: Duplicate, Delay.
// Ack: AckLost, Crash. Worker: Crash, DuplicateResult, Delay, RetryableAfterSuccess.
const (
	EffectFailBeforeApply       Effect = "fail_before_apply"
	EffectReplyLostAfterApply   Effect = "reply_lost_after_apply"
	EffectDelay                 Effect = "delay"
	EffectCrash                 Effect = "crash"
	EffectCrashAfterApply       Effect = "crash_after_apply"
	EffectPause                 Effect = "pause"
	EffectFailClean             Effect = "fail_clean"
	EffectFailStored            Effect = "fail_stored"
	EffectDuplicate             Effect = "duplicate"
	EffectAckLost               Effect = "ack_lost"
	EffectDuplicateResult       Effect = "duplicate_result"
	EffectRetryableAfterSuccess Effect = "retryable_after_success"
)

// Fault is a decision to inject: its catalog name, the effect, and a duration
// for Delay and Pause.
type Fault struct {
	Kind     string
	Effect   Effect
	Duration time.Duration
}

// Injector decides faults. The simulator asks it at every fault point during the
// fault phase and never during the heal phase. It runs on the controller or on
// the actor holding the baton, never concurrently.
type Injector interface {
	At(p *Point) (Fault, bool)
}

// WorldSetup is implemented by injectors that also shape the world before it
// runs (clock skew, routing that arrives late, scheduled crashes).
type WorldSetup interface {
	SetupWorld(w *World)
}
