package workers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sim/store"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Spec describes one simulated worker.
type Spec struct {
	ID          string
	Pool        string
	MaxParallel int
	CPU, GPU    float64 // baseline load reported in heartbeats
}

// Profile is how every worker behaves. Zero values mean the defaults noted.
type Profile struct {
	JobDurationMin    time.Duration // 1s
	JobDurationMax    time.Duration // 20s
	FailRate          float64       // share of jobs reported FAILED
	RetryableRate     float64       // share reported FAILED_RETRYABLE
	HeartbeatInterval time.Duration // 5s
	RestartAfter      time.Duration // a crashed worker comes back after this (30s)
	// NoDedup turns off the worker's idempotent consumer: by default a worker
	// runs a given dispatch (job, generation) at most once per process lifetime.
	NoDedup bool
}

// WithDefaults is the profile with every default filled in.
func (p Profile) WithDefaults() Profile {
	if p.JobDurationMin == 0 {
		p.JobDurationMin = time.Second
	}
	if p.JobDurationMax == 0 {
		p.JobDurationMax = 20 * time.Second
	}
	if p.HeartbeatInterval == 0 {
		p.HeartbeatInterval = 5 * time.Second
	}
	if p.RestartAfter == 0 {
		p.RestartAfter = 30 * time.Second
	}
	return p
}

// Fleet is a world's simulated workers.
type Fleet struct {
	env     kernel.Env
	bus     bus.Broker
	store   *store.Store
	proto   sut.WorkerProtocol
	prof    Profile
	workers []*worker
	// registries hold the idempotent consumers' metrics.
	registries []*prometheus.Registry
}

// New builds the workers of specs; none runs until Start. Each draws from its
// own PRNG, "worker-<id>", and runs in the group of that name.
func New(env kernel.Env, b bus.Broker, s *store.Store, proto sut.WorkerProtocol, specs []Spec, prof Profile) *Fleet {
	f := &Fleet{env: env, bus: b, store: s, proto: proto, prof: prof.WithDefaults()}
	for _, spec := range specs {
		f.workers = append(f.workers, &worker{fleet: f, spec: spec, group: "worker-" + spec.ID,
			rng: env.Seeds.Child("worker-" + spec.ID)})
	}
	return f
}

// Start boots every worker.
func (f *Fleet) Start() {
	for _, wk := range f.workers {
		f.start(wk)
	}
}

// Len counts the workers.
func (f *Fleet) Len() int { return len(f.workers) }

// Crash takes worker i (0-based) down now; it restarts after its delay. The
// crash goes into the history like a fault's, so the checkers know the worker
// came back with its in-memory de-duplication empty.
func (f *Fleet) Crash(i int) {
	wk := f.workers[i]
	if !f.env.Kernel.Group(wk.group).Crashed() {
		p := &kernel.Point{Kind: history.PointWorker, Actor: wk.group + "/driver", Group: wk.group}
		f.env.Host.RecordFault(nil, p, kernel.Fault{Kind: "DriverCrash", Effect: history.EffectCrash}, wk.group)
	}
	wk.crash()
}

// CrashGroup crashes the worker that runs in group, if there is one.
func (f *Fleet) CrashGroup(group string) bool {
	for _, wk := range f.workers {
		if wk.group == group {
			wk.crash()
			return true
		}
	}
	return false
}

// Registries are the workers' consumers' metrics, one per consumer.
func (f *Fleet) Registries() []*prometheus.Registry { return f.registries }

// worker consumes its direct subject, acks on receipt, runs the job as its own
// actor (the execution is the side effect exactly-once counts), reports the
// result and heartbeats its load.
type worker struct {
	fleet  *Fleet
	spec   Spec
	group  string
	rng    *rand.Rand
	active int
	seen   map[string]bool
	starts int
	// running are the indexes in the history's executions of the jobs this
	// process runs now: a crash ends them.
	running []int
	// gate is the system's idempotent consumer, if it has one.
	gate sut.DispatchGate
	// pull is this process's pull from the store, when the system's
	// workers pull their work (sut.Puller).
	pull sut.Pull
}

func (f *Fleet) start(wk *worker) {
	k := f.env.Kernel
	wk.starts++
	wk.active = 0
	wk.seen = map[string]bool{}
	k.RestartGroup(wk.group)
	f.bus.Unsubscribe(wk.group)
	if c, ok := f.proto.(sut.IdempotentConsumer); ok && !f.prof.NoDedup && wk.gate == nil {
		reg := prometheus.NewRegistry()
		f.registries = append(f.registries, reg)
		gate, err := c.Consumer(sut.Ports{Redis: f.store.Client(wk.group), Clock: k.NewClock(wk.group, 0),
			Random: f.env.Seeds.Child(wk.group + "/consumer"), Registerer: reg, Spawn: k.Spawner(wk.group)})
		if err != nil {
			// The system's consumer could not start: its failure, not the harness's.
			panic(kernel.SystemFailure(fmt.Sprintf("%s consumer could not start: %v", wk.group, err)))
		}
		wk.gate = gate
	}
	if p, ok := f.proto.(sut.Puller); ok {
		pull, err := p.Puller(sut.Ports{Redis: f.store.Client(wk.group), Clock: k.NewClock(wk.group, 0),
			Random: f.env.Seeds.Child(wk.group + "/pull"), Registerer: prometheus.NewRegistry(), Spawn: k.Spawner(wk.group)},
			sut.PullWorker{ID: wk.spec.ID, Pool: wk.spec.Pool, MaxParallel: wk.parallel()})
		if err != nil {
			panic(kernel.SystemFailure(fmt.Sprintf("%s pull could not start: %v", wk.group, err)))
		}
		wk.pull = pull
		k.Spawn(wk.group, "pull", wk.pullLoop)
	} else {
		f.bus.SubscribeHandler(f.proto.Subject(wk.spec.ID), wk.group, wk.group, dispatchHandler{wk})
	}
	k.Spawn(wk.group, "heartbeat", wk.heartbeatLoop)
}

// parallel is how many dispatches the worker runs at once (at least one).
func (wk *worker) parallel() int { return max(wk.spec.MaxParallel, 1) }

// pullLoop takes work from the store while the worker has room for it, and
// waits the pull's idle time after a pull that found nothing or failed. A
// dispatch it skips (a copy of one it runs, one the gate refused or could
// not ask about) is left pending, except one the gate refused, which is
// done: it ran before.
func (wk *worker) pullLoop(ctx context.Context) {
	k := wk.fleet.env.Kernel
	a := kernel.ActorOf(ctx)
	pull := wk.pull
	for {
		free := wk.parallel() - wk.active
		if free <= 0 {
			a.SleepUntil(k.Now() + pull.Idle())
			continue
		}
		ds, err := pull.Next(ctx, free)
		a.ExitIfDead()
		for _, d := range ds {
			k.Tracef(a.Name(), "worker pulled %s/%d", d.JobID, d.Gen)
			if wk.admit(ctx, d, pull) == refused {
				_ = pull.Done(ctx, d)
			}
		}
		if err != nil || len(ds) == 0 {
			a.SleepUntil(k.Now() + pull.Idle())
		}
	}
}

// dispatchHandler decodes dispatches with the system's worker protocol.
type dispatchHandler struct{ wk *worker }

func (h dispatchHandler) Decode(data []byte) (any, error) {
	d, err := h.wk.fleet.proto.DecodeDispatch(data)
	if err != nil {
		return nil, fmt.Errorf("decode job packet: %w", err)
	}
	return d, nil
}

func (h dispatchHandler) Handle(ctx context.Context, v any) sut.Settle {
	return h.wk.accept(ctx, v.(sut.Dispatch))
}

// accept runs a dispatch as its own actor; the idempotent consumer runs a
// (job, generation) once per process lifetime.
//
// The in-memory mark is taken before the gate, whose store call yields: a
// second copy delivered meanwhile finds it taken and is skipped, where
// checking before the gate and marking after it let both copies through.
// A gate that refuses or cannot answer gives the mark back, as if this copy
// had never come: a refused copy's repeats ask the gate again, and one
// redelivered after the error can still run.
func (wk *worker) accept(ctx context.Context, pkt sut.Dispatch) sut.Settle {
	if wk.admit(ctx, pkt, nil) == unsure {
		return sut.NakAfter(time.Second) // the store is unsure: ask again
	}
	return sut.Ack()
}

// admission is what became of a dispatch a worker was given.
type admission int

const (
	started   admission = iota // it runs as its own actor
	duplicate                  // a copy of one this process runs or ran
	refused                    // the gate says it ran before
	unsure                     // the gate could not answer
)

// admit starts a dispatch's run unless it is a duplicate or the gate
// refuses it; pull is the pull it came from (nil: delivered over the bus).
func (wk *worker) admit(ctx context.Context, pkt sut.Dispatch, pull sut.Pull) admission {
	key := fmt.Sprintf("%s/%d", pkt.JobID, pkt.Gen)
	dedup := !wk.fleet.prof.NoDedup
	if dedup && wk.seen[key] {
		wk.fleet.env.Kernel.Tracef(kernel.ActorOf(ctx).Name(), "worker skips duplicate %s", key)
		return duplicate
	}
	if dedup {
		wk.seen[key] = true
	}
	if wk.gate != nil {
		seen := wk.seen // a crash meanwhile starts the process with a new memory
		first, err := wk.gate.First(ctx, pkt)
		if err != nil || !first {
			delete(seen, key)
		}
		if err != nil {
			return unsure
		}
		if !first {
			wk.fleet.env.Kernel.Tracef(kernel.ActorOf(ctx).Name(), "worker consumer refuses %s", key)
			return refused
		}
	}
	wk.active++
	wk.fleet.env.Kernel.Spawn(wk.group, "run-"+key, func(ctx context.Context) { wk.run(ctx, pkt, pull) })
	return started
}

// run executes a dispatch and reports its result; a pulled one is then
// acknowledged through its pull (a crash before that leaves it pending).
func (wk *worker) run(ctx context.Context, pkt sut.Dispatch, pull sut.Pull) {
	fl, k := wk.fleet, wk.fleet.env.Kernel
	hist := fl.env.History
	a := kernel.ActorOf(ctx)
	prof := fl.prof
	ex := len(hist.Executions)
	hist.Executions = append(hist.Executions, history.Execution{Step: k.Step(), Time: k.Now(), Worker: wk.spec.ID,
		JobID: pkt.JobID, Gen: pkt.Gen, DispatchID: pkt.ID})
	wk.running = append(wk.running, ex)
	k.Tracef(a.Name(), "execute %s gen=%d", pkt.JobID, pkt.Gen)
	span := int64(prof.JobDurationMax - prof.JobDurationMin)
	d := prof.JobDurationMin
	if span > 0 {
		d += time.Duration(wk.rng.Int64N(span))
	}
	a.SleepUntil(k.Now() + d)
	wk.ended(ex, false)

	status := sut.Succeeded
	switch r := wk.rng.Float64(); {
	case r < prof.FailRate:
		status = sut.Failed
	case r < prof.FailRate+prof.RetryableRate:
		status = sut.FailedRetryable
	}
	results := []sut.Outcome{status}
	p := &kernel.Point{Kind: history.PointWorker, Actor: a.Name(), Group: wk.group, JobID: pkt.JobID}
	if f, fired := fl.env.Host.Fault(p); fired {
		fl.env.Host.RecordFault(a, p, f, pkt.JobID)
		for _, effect := range f.Effects() {
			switch effect {
			case history.EffectCrash:
				fl.env.Host.Crash(a)
				a.ExitIfDead()
			case history.EffectDelay:
				a.SleepUntil(k.Now() + f.Duration) // a late result
			case history.EffectDuplicateResult:
				results = append(results, results[len(results)-1])
			case history.EffectRetryableAfterSuccess:
				// Seed 004: the job completed, then teardown hit a retryable error.
				results = []sut.Outcome{sut.Succeeded, sut.FailedRetryable}
			case history.EffectRetryableResult:
				results = []sut.Outcome{sut.FailedRetryable}
			}
		}
	}
	pub := fl.bus.Publisher(wk.group)
	for _, st := range results {
		subject, msg := fl.proto.Result(pkt, wk.spec.ID, st)
		// A result the broker refused is retried, as a worker's client would.
		// Recorded as it is sent: the engine may apply it before the
		// publish returns to the worker.
		hist.Reports = append(hist.Reports, history.WorkerReport{Step: k.Step(), Time: k.Now(), Worker: wk.spec.ID,
			JobID: pkt.JobID, Gen: pkt.Gen, DispatchID: pkt.ID, Outcome: string(st),
			ResultPtr: fl.env.Observer.Message(subject, msg.Data).ResultPtr, Message: history.MessageDigest(msg.Data)})
		for try := 0; try < 5; try++ {
			if err := pub.Publish(ctx, subject, msg); err == nil {
				break
			}
			a.SleepUntil(k.Now() + time.Second)
		}
	}
	if pull != nil {
		if err := pull.Done(ctx, pkt); err != nil {
			k.Tracef(a.Name(), "worker could not acknowledge %s/%d: %v", pkt.JobID, pkt.Gen, err)
		}
	}
	wk.active--
}

// ended records that the execution at index ex of the history stopped now:
// its work done, or its process crashed.
func (wk *worker) ended(ex int, crashed bool) {
	k, hist := wk.fleet.env.Kernel, wk.fleet.env.History
	e := &hist.Executions[ex]
	e.End, e.EndStep, e.Crashed = k.Now(), k.Step(), crashed
	for i, r := range wk.running {
		if r == ex {
			wk.running = append(wk.running[:i], wk.running[i+1:]...)
			break
		}
	}
}

// crash takes the worker down: in-flight jobs are lost, and it restarts later.
func (wk *worker) crash() {
	k := wk.fleet.env.Kernel
	if k.Group(wk.group).Crashed() {
		return
	}
	for len(wk.running) > 0 {
		wk.ended(wk.running[0], true)
	}
	k.CrashGroup(wk.group)
	k.Tracef(wk.group, "worker crashed")
	k.At(k.Now()+wk.fleet.prof.RestartAfter, func() {
		k.Tracef(wk.group, "worker restarted")
		wk.fleet.start(wk)
	})
}

func (wk *worker) heartbeatLoop(ctx context.Context) {
	fl, k := wk.fleet, wk.fleet.env.Kernel
	a := kernel.ActorOf(ctx)
	pub := fl.bus.Publisher(wk.group)
	for {
		subject, msg := fl.proto.Heartbeat(sut.Heartbeat{WorkerID: wk.spec.ID, Pool: wk.spec.Pool, Active: wk.active,
			Parallel: wk.spec.MaxParallel, CPU: wk.spec.CPU + float64(wk.rng.IntN(10)), GPU: wk.spec.GPU})
		_ = pub.Publish(ctx, subject, msg)
		a.SleepUntil(k.Now() + fl.prof.HeartbeatInterval)
	}
}
