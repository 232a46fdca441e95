package sim

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// replica is one scheduler replica of the system under test: a process that
// crashes, pauses and restarts as a whole.
type replica struct {
	name     string
	index    int
	starts   int
	sys      sut.Replica
	registry *prometheus.Registry
	// Registries of every incarnation, so counters survive crashes for checking.
	registries []*prometheus.Registry
	client     *redis.Client
	// down: an operator's stop or kill holds it down until a start; a crash
	// does not restart it meanwhile.
	down bool
}

// startReplica boots (or reboots) a scheduler replica: a fresh engine on the
// shared store and bus, its subscriptions, reconciler and replayer.
func (w *World) startReplica(r *replica) {
	k := w.k
	k.RestartGroup(r.name)
	r.starts++
	var skew time.Duration
	if r.index < len(w.cfg.ReplicaSkew) {
		skew = w.cfg.ReplicaSkew[r.index]
	}
	if r.client == nil {
		r.client = w.store.Client(r.name)
	}
	r.registry = prometheus.NewRegistry()
	r.registries = append(r.registries, r.registry)
	ports := sut.Ports{
		Redis:      r.client,
		Bus:        w.bus.Publisher(r.name),
		Clock:      k.NewClock(r.name, skew),
		Random:     w.seeds.Child(fmt.Sprintf("%s#%d", r.name, r.starts)),
		Registerer: r.registry,
		Spawn:      w.k.Spawner(r.name),
	}
	b := w.bus
	b.Unsubscribe(r.name)
	opts := w.replicaOptions(r.index)
	if _, own := w.cfg.ReplicaOptions[r.index+1]; own {
		w.hist.Routing = append(w.hist.Routing, RoutingChange{Step: k.Step(), Time: k.Now(), Routing: opts.Routing.Clone(),
			Replica: r.name})
	}
	sys, err := w.cfg.System.StartReplica(ports, opts)
	if err != nil {
		// The system's process could not start: its failure, not the harness's.
		panic(kernel.SystemFailure(fmt.Sprintf("%s could not start: %v", r.name, err)))
	}
	r.sys = sys
	for _, s := range sys.Subscriptions() {
		b.SubscribeHandler(s.Subject, s.Queue, r.name, s.Handler)
	}
}

// crash takes down the process actor a runs in: a replica or a worker crashes
// whole and restarts after its delay; a client or gateway call just dies.
func (w *World) crash(a *kernel.Actor) {
	group := a.Group().Name
	for i, r := range w.replicas {
		if r.name == group {
			w.crashReplica(i)
			return
		}
	}
	if w.workers.CrashGroup(group) {
		return
	}
	a.Kill()
}

// crashReplica takes replica i (0-based) down now and restarts it after the
// configured delay. Its in-flight messages come back after the ack wait.
func (w *World) crashReplica(i int) {
	r := w.replicas[i]
	if w.k.Group(r.name).Crashed() {
		return
	}
	w.k.CrashGroup(r.name)
	w.k.Tracef(r.name, "replica crashed")
	w.k.At(w.k.Now()+w.cfg.ReplicaRestartAfter, func() {
		if r.down || !w.k.Group(r.name).Crashed() {
			return // held down by an operator, or already started
		}
		w.k.Tracef(r.name, "replica restarted")
		w.startReplica(r)
	})
}

// pauseReplica stops replica i from running for d of virtual time.
func (w *World) pauseReplica(i int, d time.Duration) {
	w.k.Tracef(w.replicas[i].name, "replica paused for %s", d)
	w.k.PauseGroup(w.replicas[i].name, w.k.Now()+d)
}

// SetRouting replaces every live replica's routing now (a config rollout).
func (w *World) SetRouting(r sut.Routing) {
	w.cfg.Options.Routing = r
	w.hist.Routing = append(w.hist.Routing, RoutingChange{Step: w.k.Step(), Time: w.k.Now(), Routing: r.Clone()})
	for _, rep := range w.replicas {
		if rep.sys != nil {
			rep.sys.SetRouting(r)
		}
	}
	w.k.Tracef("config", "routing replaced")
}

// Replicas counts the scheduler replicas.
func (w *World) Replicas() int { return len(w.replicas) }

// Metrics gathers every incarnation of every replica's registry.
func (w *World) Metrics() []prometheus.Gatherer {
	var out []prometheus.Gatherer
	for _, r := range w.replicas {
		for _, reg := range r.registries {
			out = append(out, reg)
		}
	}
	for _, reg := range w.workers.Registries() {
		out = append(out, reg)
	}
	return out
}

// replicaOptions are the options replica i (0-based) runs with.
func (w *World) replicaOptions(i int) sut.Options {
	if o, ok := w.cfg.ReplicaOptions[i+1]; ok {
		return o
	}
	return w.cfg.Options
}

// loosestSpec is the system's promise under the world's options where every
// replica may act: with replicas on other configs, the shortest timeout,
// grace window and retry cap any of them runs with, so a lower bound holds
// the fastest replica to its own setting and no faster; and each tenant's
// largest cap, none (sut.NoTenantCap) where some replica has none.
func loosestSpec(cfg Config) sut.Spec {
	spec := cfg.System.Spec(cfg.Options)
	for _, o := range cfg.ReplicaOptions {
		s := cfg.System.Spec(o)
		spec.DispatchTimeout = min(spec.DispatchTimeout, s.DispatchTimeout)
		spec.RunningTimeout = min(spec.RunningTimeout, s.RunningTimeout)
		spec.PickGrace = min(spec.PickGrace, s.PickGrace)
		spec.MaxSchedulingRetries = min(spec.MaxSchedulingRetries, s.MaxSchedulingRetries)
	}
	var running []sut.Spec // the spec each replica runs with
	for i := range cfg.Replicas {
		if o, own := cfg.ReplicaOptions[i+1]; own {
			running = append(running, cfg.System.Spec(o))
		} else {
			running = append(running, cfg.System.Spec(cfg.Options))
		}
	}
	spec.TenantMaxActive = loosestCaps(running)
	return spec
}

// loosestCaps merges the tenant caps the replicas run with: a tenant keeps
// its largest cap, and gets sut.NoTenantCap where some replica leaves it
// uncapped.
func loosestCaps(running []sut.Spec) map[string]int {
	var out map[string]int
	for _, s := range running {
		for tenant := range s.TenantMaxActive {
			if out == nil {
				out = map[string]int{}
			}
			out[tenant] = 0
		}
	}
	for tenant := range out {
		for _, s := range running {
			n, ok := s.TenantMaxActive[tenant]
			if !ok {
				n = sut.NoTenantCap
			}
			out[tenant] = max(out[tenant], n)
		}
	}
	return out
}
