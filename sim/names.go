package sim

import (
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/traffic"
	"github.com/dispatchsim/dispatchsim/sim/workers"
)

// AdmissionSnapshot is the run admission state left in the store at the end.
type AdmissionSnapshot = history.AdmissionSnapshot

// ParseSeed reads a root seed (see kernel.ParseSeed).
func ParseSeed(s string) (uint64, error) { return kernel.ParseSeed(s) }

// ParseBranch reads a branch key "K/B" (see kernel.ParseBranch).
func ParseBranch(s string) (Branch, error) { return kernel.ParseBranch(s) }

// ParseScheduling reads a strategy (see kernel.ParseScheduling).
func ParseScheduling(s string) (Scheduling, error) { return kernel.ParseScheduling(s) }

// StreamSeed is the PCG seed of a named stream of a seed or a branch (see
// kernel.StreamSeed): an injector's own streams follow the world's.
func StreamSeed(root uint64, name string, b Branch) (uint64, uint64) {
	return kernel.StreamSeed(root, name, b)
}

// WorldSetup is implemented by injectors that also shape the world before it
// runs (clock skew, routing that arrives late, scheduled crashes).
type WorldSetup interface {
	SetupWorld(w *World)
}

// Names that moved out of sim, and the run record's, which lives in package
// history: these keep the world's users (faults, scenarios, tests) short.
type (
	// the fault hook's types and the seed tree (sim/kernel)
	Point    = kernel.Point
	Fault    = kernel.Fault
	Injector = kernel.Injector
	SeedTree = kernel.SeedTree
	// a run's variant: a branch of the seed, a scheduling strategy
	Branch     = kernel.Branch
	Scheduling = kernel.Scheduling
	// a world's config (sim/workers, sim/traffic)
	WorkerSpec    = workers.Spec
	WorkerProfile = workers.Profile
	Workload      = traffic.Workload
	// the run record (history)
	History        = history.History
	SubmittedJob   = history.SubmittedJob
	StateChange    = history.StateChange
	PublishOutcome = history.PublishOutcome
	PublishRecord  = history.PublishRecord
	Execution      = history.Execution
	WorkerReport   = history.WorkerReport
	LockEvent      = history.LockEvent
	RoutingChange  = history.RoutingChange
	FaultRecord    = history.FaultRecord
	OpKind         = history.OpKind
	ClientOp       = history.ClientOp
	RedisStats     = history.RedisStats
	PointKind      = history.PointKind
	Effect         = history.Effect
	BusConfig      = history.BusConfig
)

// AllSubjects is the broker topology of one stream for every subject.
var AllSubjects = history.AllSubjects

const (
	PointRedis                  = history.PointRedis
	PointPublish                = history.PointPublish
	PointDeliver                = history.PointDeliver
	PointAck                    = history.PointAck
	PointWorker                 = history.PointWorker
	PointClient                 = history.PointClient
	EffectFailBeforeApply       = history.EffectFailBeforeApply
	EffectReplyLostAfterApply   = history.EffectReplyLostAfterApply
	EffectDelay                 = history.EffectDelay
	EffectAckLate               = history.EffectAckLate
	EffectCrash                 = history.EffectCrash
	EffectCrashAfterApply       = history.EffectCrashAfterApply
	EffectPause                 = history.EffectPause
	EffectFailClean             = history.EffectFailClean
	EffectFailStored            = history.EffectFailStored
	EffectDuplicate             = history.EffectDuplicate
	EffectAckLost               = history.EffectAckLost
	EffectDuplicateResult       = history.EffectDuplicateResult
	EffectRetryableAfterSuccess = history.EffectRetryableAfterSuccess
	EffectRetryableResult       = history.EffectRetryableResult
	PublishStored               = history.PublishStored
	PublishDeduplicated         = history.PublishDeduplicated
	PublishFailedClean          = history.PublishFailedClean
	PublishFailedStored         = history.PublishFailedStored
	OpSubmit                    = history.OpSubmit
	OpStatus                    = history.OpStatus
	OpCancel                    = history.OpCancel
	OpStartRun                  = history.OpStartRun
)
