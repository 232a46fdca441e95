package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/engine"
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
}

func (w *World) startWorker(wk *worker) {
	wk.starts++
	wk.active = 0
	wk.seen = map[string]bool{}
	w.k.RestartGroup(wk.group)
	w.bus.unsubscribeGroup(wk.group)
	w.bus.subscribeDecoded(engine.WorkerSubject(wk.spec.ID), wk.group, wk.group, decoded("decode job packet", wk.accept))
	w.k.Spawn(wk.group, "heartbeat", wk.heartbeatLoop)
}

func (wk *worker) accept(ctx context.Context, pkt engine.JobPacket) error {
	key := fmt.Sprintf("%s/%d", pkt.JobID, pkt.DispatchGen)
	if !wk.w.cfg.Workers.NoDedup && wk.seen[key] {
		wk.w.k.tracef(ActorOf(ctx).name, "worker skips duplicate %s", key)
		return nil
	}
	wk.seen[key] = true
	wk.active++
	wk.w.k.Spawn(wk.group, "run-"+key, func(ctx context.Context) { wk.run(ctx, pkt) })
	return nil
}

func (wk *worker) run(ctx context.Context, pkt engine.JobPacket) {
	w, k := wk.w, wk.w.k
	a := ActorOf(ctx)
	prof := w.cfg.Workers
	w.hist.Executions = append(w.hist.Executions, Execution{Step: k.step, Time: k.now, Worker: wk.spec.ID,
		JobID: pkt.JobID, Gen: pkt.DispatchGen, DispatchID: pkt.DispatchID})
	k.tracef(a.name, "execute %s gen=%d", pkt.JobID, pkt.DispatchGen)
	span := int64(prof.JobDurationMax - prof.JobDurationMin)
	d := prof.JobDurationMin
	if span > 0 {
		d += time.Duration(wk.rng.Int64N(span))
	}
	a.SleepUntil(k.now + d)

	status := engine.ResultSucceeded
	switch r := wk.rng.Float64(); {
	case r < prof.FailRate:
		status = engine.ResultFailed
	case r < prof.FailRate+prof.RetryableRate:
		status = engine.ResultFailedRetryable
	}
	results := []string{status}
	p := &Point{Kind: PointWorker, Actor: a.name, Group: wk.group, JobID: pkt.JobID}
	if f, fired := w.fault(p); fired {
		w.recordFault(a, p, f, pkt.JobID)
		switch f.Effect {
		case EffectCrash:
			w.crash(a)
			a.exitIfDead()
		case EffectDelay:
			a.SleepUntil(k.now + f.Duration) // a late result
		case EffectDuplicateResult:
			results = append(results, status)
		case EffectRetryableAfterSuccess:
			// Seed 004: the job completed, then teardown hit a retryable error.
			results = []string{engine.ResultSucceeded, engine.ResultFailedRetryable}
		}
	}
	pub := w.bus.Publisher(wk.group)
	for _, st := range results {
		res := engine.JobResult{JobID: pkt.JobID, WorkerID: wk.spec.ID, Status: st,
			ResultPtr: "mem://" + pkt.JobID + "/" + shortSHA(pkt.DispatchID), DispatchGen: pkt.DispatchGen}
		b, _ := json.Marshal(res)
		// A result the broker refused is retried, as a worker's client would.
		for try := 0; try < 5; try++ {
			if err := pub.Publish(ctx, engine.SubjectResult, engine.Message{Data: b}); err == nil {
				break
			}
			a.SleepUntil(k.now + time.Second)
		}
	}
	wk.active--
}

// crash takes the worker down: in-flight jobs are lost, and it restarts later.
func (wk *worker) crash() {
	k := wk.w.k
	if k.group(wk.group).crashed {
		return
	}
	k.CrashGroup(wk.group)
	k.tracef(wk.group, "worker crashed")
	k.At(k.now+wk.w.cfg.Workers.RestartAfter, func() {
		k.tracef(wk.group, "worker restarted")
		wk.w.startWorker(wk)
	})
}

func (wk *worker) heartbeatLoop(ctx context.Context) {
	w, k := wk.w, wk.w.k
	a := ActorOf(ctx)
	pub := w.bus.Publisher(wk.group)
	for {
		hb := engine.Heartbeat{WorkerID: wk.spec.ID, Pool: wk.spec.Pool, Active: wk.active,
			MaxParallel: wk.spec.MaxParallel, CPU: wk.spec.CPU + float64(wk.rng.IntN(10)), GPU: wk.spec.GPU}
		b, _ := json.Marshal(hb)
		_ = pub.Publish(ctx, engine.SubjectHeartbeat, engine.Message{Data: b})
		a.SleepUntil(k.now + w.cfg.Workers.HeartbeatInterval)
	}
}
