package kernel

import (
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Point describes where the simulator is asking for a fault.
type Point struct {
	Kind  history.PointKind
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
	Effect   history.Effect
	Duration time.Duration
	// Also are further effects at the same point, applied after Effect.
	Also []history.Effect
}

// Effects are the fault's effects in the order they apply.
func (f Fault) Effects() []history.Effect { return append([]history.Effect{f.Effect}, f.Also...) }

// Injector decides faults. The simulator asks it at every fault point during the
// fault phase and never during the heal phase. It runs on the controller or on
// the actor holding the baton, never concurrently. p is valid during the call
// only: the caller reuses it, so an injector that keeps it keeps a copy.
type Injector interface {
	At(p *Point) (Fault, bool)
}

// Host is what the world does for the store, the bus, the workers and the
// clients it hosts: it asks the injector at a fault point (in the fault phase
// only), records a fault that fired, and crashes the process an actor runs in
// (a replica or a worker restarts later; a client call just dies).
type Host interface {
	// FaultsArmed reports whether Fault would ask the injector at all: callers
	// skip building a Point when it would not.
	FaultsArmed() bool
	// Fault asks at p, which the caller may reuse once the call and any
	// RecordFault for it are done.
	Fault(p *Point) (Fault, bool)
	// RecordFault puts a fired fault into the history and the trace; a is the
	// actor it hit, nil for the bus or a driver.
	RecordFault(a *Actor, p *Point, f Fault, target string)
	Crash(a *Actor)
}

// Env is what the world hands each component it hosts (the store, the bus,
// the workers, the clients): the kernel they run on, the world's fault hook,
// the run record they append to, the system's observer, and the seed tree
// their PRNGs come from.
type Env struct {
	Kernel   *Kernel
	Host     Host
	History  *history.History
	Observer sut.Observer
	Seeds    SeedTree
}
