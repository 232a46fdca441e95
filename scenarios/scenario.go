// Package scenarios names the situations the harness puts the engine in: one
// per source article's failure mode, a few multi-replica races, and a swarm.
// A scenario turns a seed into a world (workload, engine settings, faults) and
// states what a correct engine must show; suites group scenarios with fixed
// seed ranges. Everything here is deterministic: the seed decides it all.
package scenarios

import (
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// Scenario is one named situation.
type Scenario struct {
	Name        string
	Description string
	// Source names the article or defect the scenario reproduces.
	Source string
	// Faults are the kinds the scenario turns on; each must fire at least once
	// across a suite's seeds, or the suite fails (a false green).
	Faults []faults.Kind
	// Options tunes the kinds (zero: each kind's defaults).
	Options func(o faults.Options) faults.Options
	// World is how the scenario's world differs from the default one, as data.
	World World
	// Spec is what the checker holds the run to.
	Spec checker.Spec
	// ExpectViolation names the checker that must fire on at least one seed of
	// the range: the scenario demonstrates a property that is impossible by
	// construction in this configuration, and passes when the harness finds it.
	ExpectViolation string
	// Sometimes are branches its release seeds must reach between them, or
	// the scenario tested nothing (a store loss that forgot no write).
	Sometimes []string
	// Swarm draws the fault mix from the seed instead of Faults.
	Swarm bool
	// WorldSwarm also draws the world from the seed (drawWorld): topology,
	// workload, broker and engine options, clock skew; World is its base.
	WorldSwarm bool
	// Seeds is the scenario's range in the release suite.
	Seeds SeedRange
	// System is the system under test (nil: cordum, our engine).
	System sut.System
	// Needs are the features the scenario's whole point is about: against a
	// system lacking one, its cases are not applicable (NotApplicable).
	Needs []Feature

	variant Variant
}

// Variant is how a run departs from its seed's own timeline: a branch from a
// step, another scheduling strategy. The zero value is the seed itself, so
// every existing seed's checksum stands.
type Variant struct {
	Branch sim.Branch
	// Strategy is the kernel's strategy; StrategySwarm draws it from the
	// seed instead, as world data (drawScheduling).
	Strategy      sim.Scheduling
	StrategySwarm bool
}

// IsZero reports whether v is the seed itself.
func (v Variant) IsZero() bool { return v == Variant{} }

// StrategyFlag is the strategy as the CLI takes it ("" for the default).
func (v Variant) StrategyFlag() string {
	switch {
	case v.StrategySwarm:
		return "swarm"
	case v.Strategy.IsUniform():
		return ""
	}
	return v.Strategy.String()
}

// Flags are the CLI flags that select v (" --branch K/B --strategy S"),
// empty for the seed itself.
func (v Variant) Flags() string {
	out := ""
	if !v.Branch.IsZero() {
		out += " --branch " + v.Branch.String()
	}
	if f := v.StrategyFlag(); f != "" {
		out += " --strategy " + f
	}
	return out
}

// With returns the scenario whose runs take variant v.
func (s Scenario) With(v Variant) Scenario {
	s.variant = v
	return s
}

// Variant is the variant the scenario's runs take.
func (s Scenario) Variant() Variant { return s.variant }

// DeclaredFaults are the scenario's kinds that its system can reach: a kind
// aimed at a fault point the system does not have (a rollback write, a job
// lock, run admission, a RUNNING write, a cancel a replica writes) is not
// declared for it, so it cannot fail the suite by never firing; Case.For lists
// each with why.
func (s Scenario) DeclaredFaults() []faults.Kind {
	spec := s.system().Spec(sut.Options{})
	var out []faults.Kind
	for _, k := range s.Faults {
		if k.AppliesTo(spec) {
			out = append(out, k)
		}
	}
	return out
}

// World is how a scenario's world differs from the default: plain data, so a
// run can print the options it used. Zero values keep the defaults.
type World struct {
	// Workload replaces DefaultWorkload.
	Workload *sim.Workload
	// WorkerSpecs replaces the default workers.
	WorkerSpecs []sim.WorkerSpec
	// NoBrokerDedup and NoWorkerDedup turn off de-duplication at the broker
	// and at the worker (both on by default, the deployment engines assume).
	NoBrokerDedup, NoWorkerDedup bool
	// Options are the system's settings (timeouts, retry cap, routing).
	Options sut.Options
	// Replicas, Bus, Workers and ReplicaSkew replace the world's defaults
	// (zero or nil: keep them; a skew here replaces the injector's).
	Replicas    int
	Bus         *sim.BusConfig
	Workers     *sim.WorkerProfile
	ReplicaSkew []time.Duration
	// ReplicaOptions replace Options for some replicas (1-based), and Events
	// are operators' and the environment's actions at set times.
	ReplicaOptions map[int]sut.Options
	Events         []sim.Event
	// Scheduling is the kernel's strategy (zero: the uniform pick).
	Scheduling sim.Scheduling
}

// world is the seed's world and what the checker holds it to.
func (s Scenario) world(seed uint64) (World, checker.Spec) {
	w, spec := s.World, s.Spec
	if s.WorldSwarm {
		w, spec = drawWorld(seed, s.World)
		spec.AllSucceed = s.Spec.AllSucceed
	}
	if w.NoWorkerDedup && s.keepsConsumer() {
		w.NoWorkerDedup = false
	}
	switch {
	case s.variant.StrategySwarm:
		w.Scheduling = drawScheduling(seed)
	case !s.variant.Strategy.IsUniform():
		w.Scheduling = s.variant.Strategy
	}
	return w, spec
}

// DefaultWorkload is a scenario's workload unless its World replaces it.
var DefaultWorkload = sim.Workload{Jobs: 30, StatusReads: 20, CancelRate: 0.05}

// On returns the scenario run against sys.
func (s Scenario) On(sys sut.System) Scenario {
	s.System = sys
	return s
}

// system is the scenario's system under test.
func (s Scenario) system() sut.System {
	if s.System == nil {
		return cordum.System{}
	}
	return s.System
}

// SeedRange is a half-open range of seeds [First, First+Count).
type SeedRange struct {
	First uint64
	Count int
}

// Seeds lists the range's seeds.
func (r SeedRange) Seeds() []uint64 {
	out := make([]uint64, r.Count)
	for i := range out {
		out[i] = r.First + uint64(i)
	}
	return out
}

// FaultOptions returns the scenario's fault options for a seed.
func (s Scenario) FaultOptions(seed uint64) faults.Options {
	if s.Swarm {
		o := faults.Swarm(sim.SeedTree{Root: seed}.Child("swarm"))
		if s.Options != nil {
			o = s.Options(o) // tunes the drawn mix (sparse-swarm's rarer faults)
		}
		return o
	}
	o := faults.Only(s.Faults...)
	if s.Options != nil {
		o = s.Options(o)
	}
	return faults.FitRates(o, s.system().Spec(sut.Options{}))
}

// SeedConfig is the world configuration a plain run of the seed uses, with
// defaults filled in: what a verbose run prints before the seed runs.
func (s Scenario) SeedConfig(seed uint64) sim.Config {
	return sim.WithDefaults(s.Config(seed, s.Injector(seed, nil)))
}

// Config builds the world configuration of a seed with the given injector.
func (s Scenario) Config(seed uint64, inj *faults.Injector) sim.Config {
	world, _ := s.world(seed)
	cfg := sim.Config{Seed: seed, Injector: inj, System: s.system(), Workload: DefaultWorkload,
		WorkerSpecs: world.WorkerSpecs, Options: world.Options, Replicas: world.Replicas}
	if world.Bus != nil {
		cfg.Bus = *world.Bus
	}
	if world.Workers != nil {
		cfg.Workers = *world.Workers
	}
	cfg.Bus.Dedup = !world.NoBrokerDedup
	cfg.Workers.NoDedup = world.NoWorkerDedup
	if world.Workload != nil {
		cfg.Workload = *world.Workload
	}
	cfg.ReplicaSkew = inj.ReplicaSkew(max(cfg.Replicas, 3))
	if world.ReplicaSkew != nil {
		cfg.ReplicaSkew = world.ReplicaSkew
	}
	cfg.ReplicaOptions, cfg.Events = world.ReplicaOptions, world.Events
	cfg.Scheduling, cfg.Branch = world.Scheduling, s.variant.Branch
	return cfg
}

// Outcome is one seed's run and verdict.
type Outcome struct {
	System   string
	Scenario string
	Seed     uint64
	Checksum uint64
	Steps    uint64
	Result   *checker.Result
	Run      *sim.Result
	World    *sim.World
	Plan     faults.Plan
	Fired    map[string]int
	Branches map[string]int
	// Expected are the findings the system's declared promise allows (an
	// at-least-once system's repeated publish of one message): taken out of
	// Result, counted in Branches under ExpectedKey, never a failure.
	Expected []checker.Violation
	Wall     time.Duration
	Check    time.Duration
	// Variant is the branch and strategy the run took.
	Variant Variant
}

// Run plays one seed of the scenario and checks it.
func (s Scenario) Run(seed uint64) *Outcome {
	return s.run(seed, s.Injector(seed, nil), false)
}

// RunPlan replays a recorded fault plan on the seed (shrinking, replay).
func (s Scenario) RunPlan(seed uint64, plan faults.Plan) *Outcome {
	return s.run(seed, faults.Replay(plan), false)
}

// RunTraced is Run (or, with a plan, RunPlan) keeping the trace text, for
// reports and replays; the checksum is the same either way.
func (s Scenario) RunTraced(seed uint64, plan *faults.Plan) *Outcome {
	return s.run(seed, s.Injector(seed, plan), true)
}

// Injector is the seed's fault injector: the scenario's options, or a
// recorded plan when one is given.
func (s Scenario) Injector(seed uint64, plan *faults.Plan) *faults.Injector {
	if plan != nil {
		return faults.Replay(*plan)
	}
	return faults.New(s.FaultOptions(seed), seed)
}

func (s Scenario) run(seed uint64, inj *faults.Injector, keepTrace bool) *Outcome {
	start := time.Now() // determinism-ok: wall time is a reported figure only
	cfg := s.Config(seed, inj)
	cfg.KeepTrace = keepTrace
	beats := recordHeartbeats(cfg.System)
	if beats != nil {
		cfg.System = beats
	}
	w := sim.NewWorld(cfg)
	res := w.Run()
	return s.judge(seed, inj, w, res, beats, start)
}

// judge checks a world's run and builds the seed's outcome.
func (s Scenario) judge(seed uint64, inj *faults.Injector, w *sim.World, res *sim.Result, beats *heartbeatLog,
	start time.Time) *Outcome {
	wall := time.Since(start) // determinism-ok: figure
	var seen []checker.HeartbeatFact
	if beats != nil {
		seen = beats.seen
	}
	bus := w.Config().Bus
	_, spec := s.world(seed)
	r := checker.Check(checker.Input{History: res.History, Final: res.Final, DLQ: res.DLQ, Admission: res.Admission, Metrics: w.Metrics(),
		GatewayMetrics: w.GatewayMetrics(), Spec: spec, System: w.Spec(), RunErr: res.Err, Bus: &bus, Workers: workerFacts(w.Config().WorkerSpecs, s.system().Worker()),
		Heartbeats: seen})
	o := &Outcome{System: s.system().Name(), Scenario: s.Name, Seed: seed, Checksum: res.Checksum, Steps: res.Steps, Result: r, Run: res,
		World: w, Plan: inj.Plan(), Fired: inj.Fired(), Branches: branches(w, res), Wall: wall, Check: r.Figures.CheckDuration,
		Variant: s.variant}
	if s.promiseAllows(w.Config().Workers.NoDedup) {
		o.Expected = allowedByPromise(res.History, r)
		for _, v := range o.Expected {
			o.Branches[ExpectedKey(v.Checker)]++
		}
	}
	return o
}

// workerFacts are the world's workers for the placement check. A worker's
// CPU and GPU are the baseline its heartbeats report at least (sim.WorkerSpec).
func workerFacts(specs []sim.WorkerSpec, proto sut.WorkerProtocol) []checker.WorkerFact {
	out := make([]checker.WorkerFact, len(specs))
	for i, s := range specs {
		out[i] = checker.WorkerFact{ID: s.ID, Pool: s.Pool, MaxParallel: s.MaxParallel, CPUFloor: s.CPU, GPUFloor: s.GPU,
			Subject: proto.Subject(s.ID)}
	}
	return out
}

// Violated reports whether the seed broke a property the system promises;
// findings the environment's broken contract explains are not the system's.
func (o *Outcome) Violated() bool { return o.Result.SystemFailed() }

// HasViolation reports whether the named checker fired.
func (o *Outcome) HasViolation(name string) bool {
	for _, v := range o.Result.Violations {
		if v.Checker == name {
			return true
		}
	}
	return false
}

// ReplayLine is the one command that reproduces the seed (its branch and
// strategy included).
func (o *Outcome) ReplayLine() string {
	return ReplayLine(o.System, o.Scenario, o.Seed) + o.Variant.Flags()
}

// ReplayLine is the one command that reproduces a seed of a scenario on a
// system, named so the line reproduces in any build ("" is left out).
func ReplayLine(system, scenario string, seed uint64) string {
	if system == "" {
		return fmt.Sprintf("simrun replay --scenario %s --seed %d", scenario, seed)
	}
	return fmt.Sprintf("simrun replay --system %s --scenario %s --seed %d", system, scenario, seed)
}

// branches counts how often the system reached each risky branch its spec
// names, from its metrics summed over every replica incarnation, and each
// DLQ reason code the run filed (dlq_<code>), from the store.
func branches(w *sim.World, res *sim.Result) map[string]int {
	spec := w.Spec()
	names := spec.Metrics.Branches
	out := map[string]int{}
	for _, e := range res.DLQ {
		out["dlq_"+e.ReasonCode]++
	}
	// The environment's branch: a store loss that forgot something.
	for _, l := range res.History.StoreLosses {
		if len(l.Jobs)+len(l.RunKeys) > 0 {
			out["store_loss_touched"]++
		}
	}
	for _, l := range res.History.BrokerLosses {
		if len(l.Jobs) > 0 {
			out["broker_loss_touched"]++
		}
	}
	for _, g := range append(w.Metrics(), w.GatewayMetrics()) {
		families, err := g.Gather()
		if err != nil {
			continue
		}
		for _, f := range families {
			label, ok := names[f.GetName()]
			if !ok {
				continue
			}
			for _, m := range f.GetMetric() {
				key := label
				if f.GetName() == spec.Metrics.RejectedRuns && !hasLabel(m, "code", "429") {
					continue
				}
				for _, l := range m.GetLabel() {
					if l.GetName() != "state" {
						continue
					}
					if spec.IsTerminal(l.GetValue()) {
						key = label + "_of_terminal"
					} else {
						key = label + "_in_flight"
					}
				}
				out[key] += int(m.GetCounter().GetValue())
			}
		}
	}
	return out
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
