package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// WorkerSpec describes one simulated worker.
type WorkerSpec struct {
	ID          string
	Pool        string
	MaxParallel int
	CPU, GPU    float64 // baseline load reported in heartbeats
}

// WorkerProfile is how every worker behaves. Zero values mean the defaults noted.
type WorkerProfile struct {
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

func (p WorkerProfile) withDefaults() WorkerProfile {
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

// worker consumes its direct subject, acks on receipt, runs the job as its own
// actor (the execution is the side effect exactly-once counts), reports the
// result and heartbeats its load.
type worker struct {
	w      *World
	spec   WorkerSpec
	group  string
	rng    *rand.Rand
	active int
	seen   map[string]bool
	starts int
	// gate is the system's idempotent consumer, if it has one.
	gate sut.DispatchGate
}

func (w *World) startWorker(wk *worker) {
	wk.starts++
	wk.active = 0
	wk.seen = map[string]bool{}
	w.k.RestartGroup(wk.group)
	w.bus.Unsubscribe(wk.group)
	if c, ok := w.proto.(sut.IdempotentConsumer); ok && !w.cfg.Workers.NoDedup && wk.gate == nil {
		gate, err := c.Consumer(sut.Ports{Redis: w.store.Client(wk.group), Clock: w.k.NewClock(wk.group, 0),
			Random: w.seeds.Child(wk.group + "/consumer"), Registerer: w.workerRegistry(), Spawn: w.spawner(wk.group)})
		if err != nil {
			panic(fmt.Sprintf("sim: %s consumer: %v", wk.group, err)) // a harness bug, not an input error
		}
		wk.gate = gate
	}
	w.bus.SubscribeHandler(w.proto.Subject(wk.spec.ID), wk.group, wk.group, dispatchHandler{wk})
	w.k.Spawn(wk.group, "heartbeat", wk.heartbeatLoop)
}

// dispatchHandler decodes dispatches with the system's worker protocol.
type dispatchHandler struct{ wk *worker }

func (h dispatchHandler) Decode(data []byte) (any, error) {
	d, err := h.wk.w.proto.DecodeDispatch(data)
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
func (wk *worker) accept(ctx context.Context, pkt sut.Dispatch) sut.Settle {
	key := fmt.Sprintf("%s/%d", pkt.JobID, pkt.Gen)
	if !wk.w.cfg.Workers.NoDedup && wk.seen[key] {
		wk.w.k.Tracef(kernel.ActorOf(ctx).Name(), "worker skips duplicate %s", key)
		return sut.Ack()
	}
	if wk.gate != nil {
		first, err := wk.gate.First(ctx, pkt)
		if err != nil {
			return sut.NakAfter(time.Second) // the store is unsure: ask again
		}
		if !first {
			wk.w.k.Tracef(kernel.ActorOf(ctx).Name(), "worker consumer refuses %s", key)
			return sut.Ack()
		}
	}
	wk.seen[key] = true
	wk.active++
	wk.w.k.Spawn(wk.group, "run-"+key, func(ctx context.Context) { wk.run(ctx, pkt) })
	return sut.Ack()
}

func (wk *worker) run(ctx context.Context, pkt sut.Dispatch) {
	w, k := wk.w, wk.w.k
	a := kernel.ActorOf(ctx)
	prof := w.cfg.Workers
	w.hist.Executions = append(w.hist.Executions, Execution{Step: k.Step(), Time: k.Now(), Worker: wk.spec.ID,
		JobID: pkt.JobID, Gen: pkt.Gen, DispatchID: pkt.ID})
	k.Tracef(a.Name(), "execute %s gen=%d", pkt.JobID, pkt.Gen)
	span := int64(prof.JobDurationMax - prof.JobDurationMin)
	d := prof.JobDurationMin
	if span > 0 {
		d += time.Duration(wk.rng.Int64N(span))
	}
	a.SleepUntil(k.Now() + d)

	status := sut.Succeeded
	switch r := wk.rng.Float64(); {
	case r < prof.FailRate:
		status = sut.Failed
	case r < prof.FailRate+prof.RetryableRate:
		status = sut.FailedRetryable
	}
	results := []sut.Outcome{status}
	p := &Point{Kind: PointWorker, Actor: a.Name(), Group: wk.group, JobID: pkt.JobID}
	if f, fired := (*host)(w).Fault(p); fired {
		(*host)(w).RecordFault(a, p, f, pkt.JobID)
		switch f.Effect {
		case EffectCrash:
			w.crash(a)
			a.ExitIfDead()
		case EffectDelay:
			a.SleepUntil(k.Now() + f.Duration) // a late result
		case EffectDuplicateResult:
			results = append(results, status)
		case EffectRetryableAfterSuccess:
			// Seed 004: the job completed, then teardown hit a retryable error.
			results = []sut.Outcome{sut.Succeeded, sut.FailedRetryable}
		}
	}
	pub := w.bus.Publisher(wk.group)
	for _, st := range results {
		subject, msg := w.proto.Result(pkt, wk.spec.ID, st)
		// A result the broker refused is retried, as a worker's client would.
		// Recorded as it is sent: the engine may apply it before the
		// publish returns to the worker.
		w.hist.Reports = append(w.hist.Reports, WorkerReport{Step: k.Step(), Time: k.Now(), Worker: wk.spec.ID,
			JobID: pkt.JobID, Gen: pkt.Gen, DispatchID: pkt.ID, Outcome: string(st),
			ResultPtr: w.obs.Message(subject, msg.Data).ResultPtr})
		for try := 0; try < 5; try++ {
			if err := pub.Publish(ctx, subject, msg); err == nil {
				break
			}
			a.SleepUntil(k.Now() + time.Second)
		}
	}
	wk.active--
}

// crash takes the worker down: in-flight jobs are lost, and it restarts later.
func (wk *worker) crash() {
	k := wk.w.k
	if k.Group(wk.group).Crashed() {
		return
	}
	k.CrashGroup(wk.group)
	k.Tracef(wk.group, "worker crashed")
	k.At(k.Now()+wk.w.cfg.Workers.RestartAfter, func() {
		k.Tracef(wk.group, "worker restarted")
		wk.w.startWorker(wk)
	})
}

func (wk *worker) heartbeatLoop(ctx context.Context) {
	w, k := wk.w, wk.w.k
	a := kernel.ActorOf(ctx)
	pub := w.bus.Publisher(wk.group)
	for {
		subject, msg := w.proto.Heartbeat(sut.Heartbeat{WorkerID: wk.spec.ID, Pool: wk.spec.Pool, Active: wk.active,
			Parallel: wk.spec.MaxParallel, CPU: wk.spec.CPU + float64(wk.rng.IntN(10)), GPU: wk.spec.GPU})
		_ = pub.Publish(ctx, subject, msg)
		a.SleepUntil(k.Now() + w.cfg.Workers.HeartbeatInterval)
	}
}
