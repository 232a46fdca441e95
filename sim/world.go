package sim

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/store"
	"github.com/dispatchsim/dispatchsim/sim/traffic"
	"github.com/dispatchsim/dispatchsim/sim/workers"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Config describes a world. Zero values mean the defaults noted, filled in by
// withDefaults.
type Config struct {
	Seed     uint64
	Replicas int // scheduler replicas (3)
	// Workers and their pools; default 3 general workers and 1 GPU worker.
	WorkerSpecs []WorkerSpec
	Workers     WorkerProfile
	Bus         BusConfig
	Workload    Workload
	// System is the system under test (required).
	System sut.System `json:"-"`
	// Options are the system's settings: timeouts, retry cap, routing (default:
	// topic "default" -> pool "general", "gpu" -> "gpu-pool"), run limit.
	Options sut.Options
	// ReplicaSkew shifts replica i's clock (missing entries: none).
	ReplicaSkew []time.Duration
	// ReplicaOptions replaces Options for a replica, by 1-based number: a
	// replica on another config (an old one, mid-rollout).
	ReplicaOptions map[int]sut.Options `json:",omitempty"`
	// ReplicaRestartAfter is how long a crashed replica stays down (20s).
	ReplicaRestartAfter time.Duration
	// Events are operators' and the environment's actions at set times: a
	// rolling deploy, a pause, a store failover.
	Events []Event `json:",omitempty"`

	Injector Injector `json:"-"`
	// FaultPhase is how long faults may fire (10m); the heal phase follows.
	FaultPhase time.Duration
	// HealBound is how long the heal phase may take for every job to end (30m).
	HealBound time.Duration
	// Drain keeps running this long after every job ended, so late redeliveries
	// and results get their chance to do harm (11m: past one ack wait).
	Drain time.Duration
	// KeepTrace keeps the trace text (the checksum is always computed).
	KeepTrace bool
	// WatchdogWall stops a run whose actor blocks outside the kernel (10s).
	WatchdogWall time.Duration
	// Scheduling is the kernel's strategy (zero: the uniform pick).
	Scheduling kernel.Scheduling `json:",omitempty"`
	// Branch continues the seed from a step with every stream reseeded
	// (zero: the seed itself). The trace records only the branch's part.
	Branch kernel.Branch `json:",omitempty"`
	// Live runs the world against real servers on the wall clock (live.go);
	// nil for every simulated run. Only NewLiveWorld takes it.
	Live *Live `json:"-"`
}

// WithDefaults is the configuration with every default the world would use
// filled in.
func WithDefaults(c Config) Config { return c.withDefaults() }

func (c Config) withDefaults() Config {
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	if c.WorkerSpecs == nil {
		c.WorkerSpecs = []WorkerSpec{
			{ID: "w1", Pool: "general", MaxParallel: 4},
			{ID: "w2", Pool: "general", MaxParallel: 4},
			{ID: "w3", Pool: "general", MaxParallel: 4},
			{ID: "g1", Pool: "gpu-pool", MaxParallel: 2},
		}
	}
	c.Workers = c.Workers.WithDefaults()
	if c.System == nil {
		panic("sim: Config.System is required") // a harness bug, not an input error
	}
	if c.Bus.Streams == nil {
		c.Bus.Streams = c.System.Spec(c.Options).Streams // the system's deployment
	}
	c.Bus = c.Bus.WithDefaults()
	if c.Options.Routing.Topics == nil {
		c.Options.Routing = sut.Routing{
			Topics: map[string][]string{"default": {"general"}, "gpu": {"gpu-pool"}},
			Pools:  map[string][]string{"general": nil, "gpu-pool": {"gpu"}},
		}
	}
	c.Options.RunLimit = max(c.Options.RunLimit, c.Workload.RunLimit, 1)
	own := make(map[int]sut.Options, len(c.ReplicaOptions))
	for n, o := range c.ReplicaOptions {
		// A replica's own options keep the world's routing, tenant caps and
		// run limit unless they name their own.
		if o.Routing.Topics == nil {
			o.Routing = c.Options.Routing
		}
		if o.TenantMaxActive == nil {
			o.TenantMaxActive = c.Options.TenantMaxActive
		}
		o.RunLimit = max(o.RunLimit, c.Options.RunLimit)
		own[n] = o
	}
	if c.ReplicaOptions != nil {
		c.ReplicaOptions = own
	}
	c.Workload = c.Workload.WithDefaults()
	if c.ReplicaRestartAfter == 0 {
		c.ReplicaRestartAfter = 20 * time.Second
	}
	if c.FaultPhase == 0 {
		c.FaultPhase = 10 * time.Minute
	}
	if c.HealBound == 0 {
		c.HealBound = 30 * time.Minute
	}
	if c.Drain == 0 {
		c.Drain = 11 * time.Minute
	}
	if c.WatchdogWall == 0 {
		c.WatchdogWall = 10 * time.Second
	}
	return c
}

// World is one simulated deployment: the kernel, the store, the bus, scheduler
// replicas, workers and gateway clients, and the ground truth of what happened.
type World struct {
	cfg      Config
	seeds    SeedTree
	k        *kernel.Kernel
	trace    *kernel.Trace
	store    *store.Store
	bus      bus.Broker
	hist     *History
	replicas []*replica
	workers  *workers.Fleet
	obs      sut.Observer
	proto    sut.WorkerProtocol
	spec     sut.Spec
	clients  *traffic.Clients
	// gatewayRegistry holds the gateway's admission metrics.
	gatewayRegistry *prometheus.Registry
	healing         bool

	stopWatch  func()
	allEndedAt time.Duration
	forked     bool // the branch's step came
}

// NewWorld builds a world; nothing runs until Run.
func NewWorld(cfg Config) *World {
	if cfg.Live != nil {
		panic("sim: a live world is built by NewLiveWorld") // a harness bug
	}
	w, _ := newWorld(cfg)
	return w
}

func newWorld(cfg Config) (*World, error) {
	cfg = cfg.withDefaults()
	trace := kernel.NewTrace(cfg.KeepTrace)
	seeds := kernel.NewSeedTree(cfg.Seed)
	w := &World{cfg: cfg, seeds: seeds, trace: trace, hist: &History{}}
	scheduler := seeds.Child("scheduler")
	w.k = kernel.New(scheduler, trace)
	if !cfg.Scheduling.IsUniform() {
		w.k.UseStrategy(cfg.Scheduling.New(scheduler))
		w.k.Tracef("sim", "strategy %s", cfg.Scheduling)
	}
	w.obs, w.spec, w.proto = cfg.System.Observer(), loosestSpec(cfg), cfg.System.Worker()
	if cfg.Live != nil {
		if err := w.connectLive(); err != nil {
			return nil, err
		}
	} else {
		w.store = store.New(w.env(), w.spec)
		w.bus = bus.New(w.env(), cfg.Bus)
	}
	w.gatewayRegistry = prometheus.NewRegistry()
	gw, err := cfg.System.StartGateway(sut.Ports{Redis: w.store.Client("gateway"), Bus: w.bus.Publisher("clients"),
		Clock: w.k.NewClock("gateway", 0), Random: seeds.Child("gateway"), Registerer: w.gatewayRegistry,
		Spawn: w.k.Spawner("gateway")}, cfg.Options)
	if err != nil {
		panic(fmt.Sprintf("sim: gateway: %v", err)) // a harness bug, not an input error
	}
	w.clients = traffic.New(w.env(), w.store, gw, cfg.Workload, cfg.FaultPhase)
	w.clients.HoldTo(w.spec.RunRequests)
	w.clients.RetryWithin(w.spec.SubmitDedupWindow)
	w.hist.Routing = []RoutingChange{{Routing: cfg.Options.Routing.Clone()}}
	for i := range cfg.Replicas {
		var skew time.Duration
		if i < len(cfg.ReplicaSkew) {
			skew = cfg.ReplicaSkew[i]
		}
		w.hist.ReplicaSkew = append(w.hist.ReplicaSkew, skew)
		w.replicas = append(w.replicas, &replica{name: fmt.Sprintf("replica-%d", i+1), index: i})
	}
	w.workers = workers.New(w.env(), w.bus, w.store, w.proto, cfg.WorkerSpecs, cfg.Workers)
	return w, nil
}

// At runs fn on the controller at virtual time at: a fault plan stages
// events at fixed times this way (a routing change and its repair).
func (w *World) At(at time.Duration, fn func()) { w.k.At(at, fn) }

// Trace is the decision log.
func (w *World) Trace() *kernel.Trace { return w.trace }

// Config is the world's configuration with defaults filled in.
func (w *World) Config() Config { return w.cfg }

// Spec is what the system under test promises, with the world's options.
func (w *World) Spec() sut.Spec { return w.spec }

// env is what the world hands the components it hosts.
func (w *World) env() kernel.Env {
	return kernel.Env{Kernel: w.k, Host: (*host)(w), History: w.hist, Observer: w.obs, Seeds: w.seeds}
}

// host is the world in the role of kernel.Host, kept off World's exported
// methods.
type host World

// FaultsArmed reports whether Fault asks the injector at all.
func (h *host) FaultsArmed() bool { return !h.healing && h.cfg.Injector != nil }

// Fault asks the injector, in the fault phase only.
func (h *host) Fault(p *Point) (Fault, bool) {
	if !h.FaultsArmed() {
		return Fault{}, false
	}
	p.Step, p.Time, p.Spec = h.k.Step(), h.k.Now(), &h.spec
	return h.cfg.Injector.At(p)
}

// RecordFault puts a fault that fired into the history and the trace.
func (h *host) RecordFault(a *kernel.Actor, p *Point, f Fault, target string) {
	name := p.Actor
	if a != nil {
		name = a.Name()
	}
	h.hist.Faults = append(h.hist.Faults, FaultRecord{Step: h.k.Step(), Time: h.k.Now(), Actor: name,
		Kind: f.Kind, Effect: f.Effect, Also: f.Also, Point: p.Kind, Target: target})
	if len(f.Also) > 0 {
		h.k.Tracef(name, "fault %s (%s, also %v) at %s %s", f.Kind, f.Effect, f.Also, p.Kind, target)
		return
	}
	h.k.Tracef(name, "fault %s (%s) at %s %s", f.Kind, f.Effect, p.Kind, target)
}

// Crash takes down the process actor a runs in.
func (h *host) Crash(a *kernel.Actor) { (*World)(h).crash(a) }

// GatewayMetrics is the gateway's registry (run admission).
func (w *World) GatewayMetrics() prometheus.Gatherer { return w.gatewayRegistry }

// Result is what a run produced.
type Result struct {
	Checksum uint64
	Steps    uint64
	History  *History
	// Final is every job at the end, as the observer read it from the store.
	Final map[string]sut.JobFact
	// DLQ is every stored dead-letter entry, by job id.
	DLQ map[string]sut.DLQEntry
	// Admission is the run admission state at the end.
	Admission AdmissionSnapshot
	// Err is a kernel failure: a deadlock, a stalled actor, a panic.
	Err error
}

// Run plays the world: the fault phase, then the heal phase until every
// accepted job is terminal (plus the drain) or the heal bound passes.
//
// A panic anywhere in the run (an actor, an alarm, the start, the final
// snapshot) ends it with Result.Err (kernel.Recovered): a HarnessFault when
// the simulator raised it. The history and the trace up to it are kept.
func (w *World) Run() *Result {
	err := w.guard(w.start)
	if err == nil {
		err = w.advance(w.cfg.FaultPhase)
	}
	return w.finish(err)
}

// RecoveredPanic says whose a panic recovered outside a world's run is
// (kernel.Classify): a HarnessFault when the harness raised it, the
// system's otherwise. Call it from the deferred function that recovered it.
func RecoveredPanic(where string, rec any) error { return kernel.Classify(where, rec) }

// guard runs fn on the controller and returns a panic it raised as the
// run's error, so the process and the seed's evidence outlive it.
func (w *World) guard(fn func()) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			err = w.k.Recovered("controller", rec)
		}
	}()
	fn()
	return nil
}

// start boots the world: the injector's setup, the replicas, the workers and
// the planned workload. Nothing runs until the kernel does.
func (w *World) start() {
	w.stopWatch = w.k.Watch(w.cfg.WatchdogWall)
	if !w.cfg.Branch.IsZero() {
		w.k.Mute()
		w.k.AtStep(w.cfg.Branch.Step, w.fork)
	}
	for _, e := range w.cfg.Events {
		if err := w.Schedule(e); err != nil {
			panic(fmt.Sprintf("sim: Config.Events: %v", err)) // a scenario's mistake, caught by its tests
		}
	}
	if s, ok := w.cfg.Injector.(WorldSetup); ok {
		s.SetupWorld(w)
	}
	for _, r := range w.replicas {
		w.startReplica(r)
	}
	w.workers.Start()
	w.clients.Plan()
}

// advance runs the fault phase on for d of virtual time.
func (w *World) advance(d time.Duration) error {
	return w.k.Run(w.k.Now()+d, nil)
}

// finish runs the heal phase (unless the fault phase failed with err) until
// every accepted job is terminal and every client is done, then the drain.
func (w *World) finish(err error) *Result {
	k := w.k
	if w.stopWatch != nil {
		defer w.stopWatch()
	}
	if err == nil {
		err = w.heal(nil)
	}
	w.hist.End = k.Now()
	if err == nil && !w.cfg.Branch.IsZero() && !w.forked {
		err = fmt.Errorf("branch %s: the seed ended at step %d, before the branch's step", w.cfg.Branch, k.Step())
	}
	res := &Result{Checksum: w.trace.Checksum(), Steps: k.Step(), History: w.hist, Err: err}
	if serr := w.guard(func() {
		res.Final, res.DLQ = w.snapshot()
		res.Admission = w.clients.Admission()
	}); res.Err == nil {
		res.Err = serr
	}
	k.Shutdown()
	w.closeLive()
	w.store.Close()
	return res
}

// heal runs the heal phase until every accepted job is terminal and every
// client is done, then the drain; halt, if set, stops it early.
func (w *World) heal(halt func() bool) error {
	k := w.k
	w.healing = true
	w.hist.FaultPhaseEnd = k.Now()
	k.Tracef("sim", "heal phase")
	healEnd := k.Now() + w.cfg.HealBound
	ended := false
	return k.Run(healEnd, func() bool {
		if halt != nil && halt() {
			return true
		}
		if !ended && w.clients.Pending() == 0 && w.store.Unfinished() == 0 {
			ended = true
			w.allEndedAt = k.Now()
		}
		return ended && k.Now() >= w.allEndedAt+w.cfg.Drain
	})
}

// BranchInjector is implemented by injectors that draw faults as the run
// goes: at a branch's step the world has them reseed their streams.
type BranchInjector interface {
	Fork(b kernel.Branch)
}

// fork turns the seed into the branch: every stream is reseeded for it, and
// the trace, silent until now, records from here.
func (w *World) fork() {
	b := w.cfg.Branch
	w.forked = true
	w.k.Unmute()
	w.seeds.Fork(b)
	w.k.Reseeded()
	if inj, ok := w.cfg.Injector.(BranchInjector); ok {
		inj.Fork(b)
	}
	w.k.Tracef("sim", "branch %s of seed %d", b, w.cfg.Seed)
}

// snapshot reads every job's record and DLQ entry straight from miniredis.
func (w *World) snapshot() (map[string]sut.JobFact, map[string]sut.DLQEntry) {
	jobs := map[string]sut.JobFact{}
	for _, key := range w.store.Keys() {
		if id, ok := w.obs.JobKey(key); ok {
			jobs[id] = w.obs.Job(w.store, key)
		}
	}
	return jobs, w.obs.DLQ(w.store)
}
