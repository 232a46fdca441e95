// Package checker decides whether a simulated run was correct, from the
// simulator's ground truth: what the store committed, what the broker stored,
// what workers executed, what clients saw. It never trusts the engine's own
// account of itself; the engine's metrics are only compared against that truth.
//
// Check returns a layered result: harness (the simulator ran the world
// faithfully), assumptions (the run is fit to judge), invariants (safety),
// linearization, liveness. A failing layer names itself, and each violation
// names its checker, the job or key, and the step.
package checker

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Layer is one level of the verdict.
type Layer string

// The layers, in the order they are judged.
const (
	// LayerHarness holds the harness's own faults: a panic the simulator
	// raised, a simulator invariant broken, a store loss it restored wrong.
	// The seed fails as the harness's, never as the system's, and nothing
	// else is judged on a run the harness got wrong.
	LayerHarness       Layer = "harness"
	LayerAssumptions   Layer = "assumptions"
	LayerInvariants    Layer = "invariants"
	LayerLinearization Layer = "linearization"
	LayerLiveness      Layer = "liveness"
	// LayerEnvironment holds the violations that follow the environment
	// breaking its own contract (a store that forgot acknowledged writes):
	// reported, never blamed on the system.
	LayerEnvironment Layer = "environment"
)

// Layers lists the layers in order.
var Layers = []Layer{LayerHarness, LayerAssumptions, LayerInvariants, LayerLinearization, LayerLiveness, LayerEnvironment}

// Input is everything a check reads.
type Input struct {
	History *history.History
	Final   map[string]sut.JobFact // every job at the end
	DLQ     map[string]sut.DLQEntry
	// Admission is the run admission state left in the store.
	Admission history.AdmissionSnapshot
	// System is what the system under test promises: states, terminal
	// states, transitions, the attempt rule, metric names.
	System  sut.Spec
	Metrics []prometheus.Gatherer // every incarnation of every replica
	// GatewayMetrics is the gateway's registry (run admission's counters).
	// Nil: not checked.
	GatewayMetrics prometheus.Gatherer
	Spec           Spec
	// RunErr is a kernel failure (deadlock, stall, panic): an assumption
	// failure, or the harness's when the error says so (HarnessFault).
	RunErr error
	// Bus is the broker the world ran with, which exactly-once
	// findings read to tell a broker window exceeded from a re-publish nothing
	// could absorb. Nil: a de-duplicating broker with the default window is
	// assumed, and the attribution says so.
	Bus *history.BusConfig
	// Workers are the world's workers as the simulator set them up: what a
	// placement check holds each execution's worker to. Nil: not checked.
	Workers []WorkerFact
	// Heartbeats are the load reports each replica handled, in step order:
	// what a least-loaded pick could have known. Nil: not checked.
	Heartbeats []HeartbeatFact
}

// WorkerFact is one worker of the world: its pool, its parallel limit (0:
// none), the least CPU and GPU use its heartbeats ever report, and the
// subject its dispatches are published on.
type WorkerFact struct {
	ID, Pool           string
	MaxParallel        int
	CPUFloor, GPUFloor float64
	Subject            string
}

// HeartbeatFact is one worker's load report as a replica handled it.
type HeartbeatFact struct {
	Step                uint64
	Time                time.Duration
	Replica             string // the replica's process (actor group)
	Worker, Pool        string
	Active, MaxParallel int
	CPU, GPU            float64
}

// Spec is what the run promised. Zero values mean the system's (Input.System).
type Spec struct {
	DispatchTimeout   time.Duration
	ReconcileInterval time.Duration
	// ExactlyOnceImpossible marks a configuration where duplicate dispatch is
	// expected by construction (an ambiguous publish with no de-duplication at
	// the broker or the worker): the scenario then asserts the violation is found.
	ExactlyOnceImpossible bool
	// ExactlyOnceUncovered says no de-duplication layer covers a re-dispatch
	// after an ambiguous publish (the world's broker does not de-duplicate):
	// a second stored copy of a dispatch whose first copy's publish failed
	// ambiguously is then counted (Figures.UncoveredRepublishes), not a
	// finding. Only that repeat is excused; any other stays a finding.
	ExactlyOnceUncovered bool
	// AllSucceed says every accepted job can succeed (healthy workers, a
	// fault that heals in time): each must end SUCCEEDED, or CANCELLED by its
	// client.
	AllSucceed bool
	// Timely says no fault of the world can hold up the system's own timers
	// and retries (no store faults, crashes or pauses, only faults around
	// them): its upper timing bounds then hold in the fault phase too, not only
	// once the faults stopped.
	Timely bool
	// WorkersDedupDurably says workers remember what they ran across restarts
	// (a durable idempotent consumer; on whenever the system's spec says so): one stored message executed twice is then
	// an exactly-once finding blamed on the worker. By default a worker's memory
	// lasts as long as its process, and since the history does not record worker
	// restarts such a repeat is only counted (Figures.DuplicateExecutions).
	WorkersDedupDurably bool
	// LinearizabilityTimeout bounds each partition's check (5s of wall time).
	LinearizabilityTimeout time.Duration
}

func (s Spec) withDefaults(sys sut.Spec) Spec {
	if s.DispatchTimeout == 0 {
		s.DispatchTimeout = sys.DispatchTimeout
	}
	if s.ReconcileInterval == 0 {
		s.ReconcileInterval = sys.ReconcileInterval
	}
	s.WorkersDedupDurably = s.WorkersDedupDurably || sys.WorkersDedupDurably
	if s.LinearizabilityTimeout == 0 {
		s.LinearizabilityTimeout = 5 * time.Second
	}
	return s
}

// Violation is one broken property.
type Violation struct {
	Layer   Layer
	Checker string
	Job     string // job id or idempotency key
	Step    uint64
	Time    time.Duration
	Message string
	// FaultSteps are the steps of the faults that fired before the violation and
	// touched the same job (or, failing that, the last few before it).
	FaultSteps []uint64
	// Dedup names the layer that failed to de-duplicate, for exactly-once
	// findings; empty otherwise.
	Dedup DedupLayer
}

func (v Violation) String() string {
	return fmt.Sprintf("%s/%s job=%s step=%d t=%s: %s", v.Layer, v.Checker, v.Job, v.Step, v.Time, v.Message)
}

// Result is a run's verdict.
type Result struct {
	Violations []Violation
	// Linearizability is Ok, Illegal or Unknown (a check that ran out of time);
	// Unknown is its own outcome, never a pass.
	Linearizability LinOutcome
	Partitions      []Partition // one per job and per idempotency key checked
	Figures         Figures
}

// Figures are measurements the suites report, not pass/fail verdicts.
type Figures struct {
	Jobs                  int
	TimeoutNeverPublished int // jobs that ended TIMEOUT without a stored dispatch
	DuplicateExecutions   int // a dispatch executed twice (broker redelivery past a worker restart)
	UncoveredRepublishes  int // re-dispatches after an ambiguous publish that no de-duplication layer covered
	// ClockExcuse is the replicas' clock spread the timing checks forgave,
	// because the system declares it measures on its replicas' clocks.
	ClockExcuse   time.Duration
	CheckDuration time.Duration
}

// Failed reports whether any layer failed or linearizability was not shown.
func (r *Result) Failed() bool {
	return len(r.Violations) > 0 || r.Linearizability != LinOk
}

// SystemFailed reports whether a violation is the system's: one the
// environment does not explain, or linearizability not shown.
func (r *Result) SystemFailed() bool {
	for _, v := range r.Violations {
		if v.Layer != LayerEnvironment {
			return true
		}
	}
	return r.Linearizability != LinOk
}

// FirstFailedLayer is the lowest failing layer, or "" if none.
func (r *Result) FirstFailedLayer() Layer {
	for _, l := range Layers {
		for _, v := range r.Violations {
			if v.Layer == l {
				return l
			}
		}
		if l == LayerLinearization && r.Linearizability != LinOk {
			return l
		}
	}
	return ""
}

// Summary is one line per violation, ordered by step.
func (r *Result) Summary() string {
	var b strings.Builder
	for _, v := range r.Violations {
		b.WriteString(v.String())
		b.WriteByte('\n')
	}
	if r.Linearizability != LinOk {
		fmt.Fprintf(&b, "linearization: %s\n", r.Linearizability)
	}
	return b.String()
}

// checker is one named property.
type checkFunc func(c *run)

// run carries a check's input and collects violations.
type run struct {
	in   Input
	spec Spec
	out  *Result
	// jobStates is the committed history per job, in step order.
	jobStates map[string][]history.StateChange
	jobIDs    []string
	// byToken is the lock commands per token (leases), built on first use.
	byToken []*lease
	// settles are the handlers' settles by delivery actor, built on first use.
	settles map[string][]history.Settle
	// reports and executions are the workers' reports and executions by
	// job, built on first use.
	reports    map[string][]history.WorkerReport
	executions map[string][]history.Execution
	// uncoveredGens are the generations whose repeated copies exactly-once
	// counts as uncovered re-publishes, built on first use.
	uncoveredGens map[dispatchKey]bool
	// tenantActive is each tenant's count of active jobs over the run,
	// built when a guard first asks.
	tenantActive map[string][]tenantCount
	// stepOrdered: 0 not yet known, 1 heartbeats and publishes are each in
	// step order, 2 they are not (see changesInStepOrder).
	stepOrdered int
	// gathered are the metrics registries' families, gathered on first use.
	gathered [][]*dto.MetricFamily
}

func (c *run) violate(layer Layer, checker, job string, step uint64, t time.Duration, format string, args ...any) {
	c.out.Violations = append(c.out.Violations, Violation{Layer: layer, Checker: checker, Job: job, Step: step,
		Time: t, Message: fmt.Sprintf(format, args...), FaultSteps: c.faultsBefore(job, step)})
}

// violateDedup records an exactly-once finding with the layer it blames.
func (c *run) violateDedup(layer DedupLayer, checker, job string, step uint64, t time.Duration, format string, args ...any) {
	c.violate(LayerInvariants, checker, job, step, t, format, args...)
	c.out.Violations[len(c.out.Violations)-1].Dedup = layer
}

// faultsBefore lists the faults at or before step that touched job, or the last
// three faults before it when none did.
func (c *run) faultsBefore(job string, step uint64) []uint64 {
	var mine, all []uint64
	for _, f := range c.in.History.Faults {
		if f.Step > step {
			break
		}
		all = append(all, f.Step)
		if job != "" && mentions(f.Target, job) {
			mine = append(mine, f.Step)
		}
	}
	if len(mine) > 0 {
		return mine
	}
	if len(all) > 3 {
		all = all[len(all)-3:]
	}
	return all
}

// Check judges a run.
func Check(in Input) *Result {
	start := time.Now() // determinism-ok: measures the checker's own cost, never feeds a decision
	c := newRun(in)
	c.out.Figures.Jobs = len(in.History.Submitted)
	c.out.Figures.ClockExcuse = c.clockExcuse()

	checkAssumptions(c)
	if len(c.out.Violations) == 0 {
		for _, f := range []checkFunc{checkExactlyOnce, checkNoResurrection, checkAccounting, checkRefinement, checkLeasesRenewed, checkBackoff,
			checkPlacement, checkLeastLoaded, checkAdmissionContract, checkSuccessKept, checkNoConcurrentDispatches,
			checkSubmitDedup} {
			f(c)
		}
		checkLinearizability(c)
		checkLiveness(c)
		attributeToEnvironment(c)
	} else {
		c.out.Linearizability = LinSkipped
	}
	sort.SliceStable(c.out.Violations, func(i, j int) bool {
		a, b := c.out.Violations[i], c.out.Violations[j]
		if layerIndex(a.Layer) != layerIndex(b.Layer) {
			return layerIndex(a.Layer) < layerIndex(b.Layer)
		}
		return a.Step < b.Step
	})
	c.out.Figures.CheckDuration = time.Since(start) // determinism-ok: a figure, not a decision
	return c.out
}

// CheckInvariants judges only the safety properties that hold at every moment
// of a run (exactly-once publish and execution, no resurrection, the
// transition graph, no two dispatches of a job running at once), so a driver can assert them after each step.
func CheckInvariants(in Input) []Violation {
	c := newRun(in)
	checkExactlyOnce(c)
	checkNoResurrection(c)
	checkNoConcurrentDispatches(c)
	return c.out.Violations
}

func newRun(in Input) *run {
	if len(in.System.Terminal) == 0 {
		panic("checker: Input.System names no terminal states") // a caller bug: the spec is required
	}
	c := &run{in: in, spec: in.Spec.withDefaults(in.System), out: &Result{}, jobStates: map[string][]history.StateChange{}}
	c.indexStates()
	return c
}

func (c *run) indexStates() {
	for _, s := range c.in.History.States {
		if _, ok := c.jobStates[s.JobID]; !ok {
			c.jobIDs = append(c.jobIDs, s.JobID)
		}
		c.jobStates[s.JobID] = append(c.jobStates[s.JobID], s)
	}
	sort.Strings(c.jobIDs)
}

func layerIndex(l Layer) int {
	for i, x := range Layers {
		if x == l {
			return i
		}
	}
	return len(Layers)
}

// HarnessFault is a run error the harness declares its own (the kernel's
// HarnessFault): a panic the simulator raised or an invariant of its own it
// found broken, at a step and virtual time.
type HarnessFault interface {
	error
	HarnessFault() (step uint64, at time.Duration)
}

// checkAssumptions: the harness ran the world faithfully and the run itself
// finished cleanly, so the rest can judge it.
func checkAssumptions(c *run) {
	var fault HarnessFault
	switch {
	case errors.As(c.in.RunErr, &fault):
		step, at := fault.HarnessFault()
		c.violate(LayerHarness, "harness_fault", "", step, at, "%v", c.in.RunErr)
	case c.in.RunErr != nil:
		c.violate(LayerAssumptions, "run_completed", "", 0, c.in.History.End, "%v", c.in.RunErr)
	}
	// The environment layer excuses what follows a store loss only if the
	// simulator restored the copy it says it did: a restore that got a key
	// wrong is the harness's defect, and no later finding is the system's or
	// the environment's until it is fixed.
	for _, l := range c.in.History.StoreLosses {
		for _, what := range l.Inconsistent {
			c.violate(LayerHarness, "store_restored_faithfully", "", l.Step, l.Time,
				"the simulated store's failover (everything since %s forgotten) left an inconsistent keyspace: %s", l.Since, what)
		}
	}
}

// mentions reports whether target names job as a whole token ("job:j-1",
// "worker.w1.jobs j-1"), so j-1 does not match j-10.
func mentions(target, job string) bool {
	for _, tok := range strings.FieldsFunc(target, func(r rune) bool { return r == ' ' || r == ':' || r == '/' }) {
		if tok == job {
			return true
		}
	}
	return false
}
