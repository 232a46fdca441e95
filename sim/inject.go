package sim

import (
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
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
	// Fact is what the system's observer says the command does.
	Fact sut.CommandFact
	// Spec is the system's spec, for matching facts against its states.
	Spec *sut.Spec

	// Bus
	Subject  string
	MsgID    string
	JobID    string // the job a dispatch, request or result is about
	Delivery int    // delivery count of the message (1 = first)
	// Heartbeat marks a worker's load report (the observer's fact).
	Heartbeat bool
}

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
