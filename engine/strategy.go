package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Routing maps topics to worker pools. It can be replaced while the engine runs
// (a topic may ship before its mapping: seed 003's rollout race).
type Routing struct {
	// Topics maps a topic to the pools that serve it.
	Topics map[string][]string
	// Pools maps a pool name to what it offers.
	Pools map[string]Pool
}

// Pool is a worker pool's static description.
type Pool struct {
	// Requires lists the capabilities the pool satisfies (case-insensitive). A
	// pool with none accepts only jobs that require nothing.
	Requires []string
}

// Scheduling errors. The three no_pool_mapping causes all match ErrNoPoolMapping.
var (
	ErrNoPoolMapping  = errors.New("no_pool_mapping")
	ErrNoWorkers      = errors.New("no_workers")
	ErrPoolOverloaded = errors.New("pool_overloaded")
	ErrTenantLimit    = errors.New("tenant_limit")
)

// SchedulingError is a failed pick with its root cause.
type SchedulingError struct {
	Code ReasonCode
	// Permanent causes are configuration errors: they fail the job after the grace
	// window instead of retrying to the cap.
	Permanent bool
	Detail    string
}

func (e *SchedulingError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Detail) }

// Is matches the coarse sentinel of the cause.
func (e *SchedulingError) Is(target error) bool {
	switch e.Code {
	case ReasonNoPoolMappingTopic, ReasonNoPoolMappingPreferred, ReasonNoPoolMappingRequires:
		return target == ErrNoPoolMapping
	case ReasonNoWorkers:
		return target == ErrNoWorkers
	case ReasonPoolOverloaded:
		return target == ErrPoolOverloaded
	case ReasonTenantLimit:
		return target == ErrTenantLimit
	}
	return false
}

func schedErr(code ReasonCode, permanent bool, format string, args ...any) *SchedulingError {
	return &SchedulingError{Code: code, Permanent: permanent, Detail: fmt.Sprintf(format, args...)}
}

// WorkerRegistry holds the last heartbeat of each worker. Heartbeats older than
// the TTL are ignored. In memory per replica, as every replica hears every heartbeat.
type WorkerRegistry struct {
	mu      sync.Mutex
	ttl     time.Duration
	workers map[string]workerStatus
}

type workerStatus struct {
	Heartbeat
	seen time.Time
}

// NewWorkerRegistry returns an empty registry whose entries live for ttl.
func NewWorkerRegistry(ttl time.Duration) *WorkerRegistry {
	return &WorkerRegistry{ttl: ttl, workers: map[string]workerStatus{}}
}

// Observe records a heartbeat seen at now.
func (r *WorkerRegistry) Observe(hb Heartbeat, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.workers[hb.WorkerID] = workerStatus{Heartbeat: hb, seen: now}
}

// noteDispatched counts a dispatch against the worker until its next heartbeat,
// so a burst of jobs does not all land on the worker that looked idlest.
func (r *WorkerRegistry) noteDispatched(workerID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.workers[workerID]; ok {
		w.Active++
		r.workers[workerID] = w
	}
}

// live returns the workers of the given pools heard from within the TTL, sorted
// by worker id (map order must never decide anything).
func (r *WorkerRegistry) live(pools map[string]bool, now time.Time) []Heartbeat {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Heartbeat
	for _, w := range r.workers {
		if pools[w.Pool] && now.Sub(w.seen) <= r.ttl {
			out = append(out, w.Heartbeat)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WorkerID < out[j].WorkerID })
	return out
}

// Overload thresholds of a worker: at or above any of them it takes no new
// job. A worker with no parallel limit (MaxParallel 0) is judged by CPU and
// GPU alone.
const (
	OverloadLoadRatio = 0.9
	OverloadCPU       = 90
	OverloadGPU       = 90
)

func overloaded(w Heartbeat) bool {
	if w.MaxParallel > 0 && float64(w.Active)/float64(w.MaxParallel) >= OverloadLoadRatio {
		return true
	}
	return w.CPU >= OverloadCPU || w.GPU >= OverloadGPU
}

func loadScore(w Heartbeat) float64 { return float64(w.Active) + w.CPU/100 + w.GPU/100 }

// pickLeastLoaded chooses the worker for a job: the topic's pools, narrowed by a
// valid preferred pool, filtered by requires; among their live workers that are
// not overloaded, the lowest score wins, ties broken by worker id.
func pickLeastLoaded(routing *Routing, reg *WorkerRegistry, req JobRequest, now time.Time) (string, error) {
	return pickKeeping(routing, reg, req, now, "")
}

// pickKeeping is pickLeastLoaded, but keeps worker keep while it is live,
// eligible and not overloaded: a re-publish of a message id must go to the
// subject its first copy went to, where the broker may drop it.
func pickKeeping(routing *Routing, reg *WorkerRegistry, req JobRequest, now time.Time, keep string) (string, error) {
	topicPools := routing.Topics[req.Topic]
	if req.PreferredPool != "" {
		if !containsFold(topicPools, req.PreferredPool) {
			return "", schedErr(ReasonNoPoolMappingPreferred, true, "preferred pool %q not mapped for topic %q", req.PreferredPool, req.Topic)
		}
		topicPools = []string{req.PreferredPool}
	}
	if len(topicPools) == 0 {
		return "", schedErr(ReasonNoPoolMappingTopic, true, "topic %q has no pool", req.Topic)
	}
	eligible := map[string]bool{}
	for _, name := range topicPools {
		if pool, ok := routing.Pools[name]; ok && satisfies(pool.Requires, req.Requires) {
			eligible[name] = true
		}
	}
	if len(eligible) == 0 {
		return "", schedErr(ReasonNoPoolMappingRequires, true, "no pool of topic %q satisfies requires %v", req.Topic, req.Requires)
	}
	workers := reg.live(eligible, now)
	if len(workers) == 0 {
		return "", schedErr(ReasonNoWorkers, false, "no live worker in pools of topic %q", req.Topic)
	}
	best := -1
	for i, w := range workers {
		if overloaded(w) {
			continue
		}
		if w.WorkerID == keep {
			return keep, nil
		}
		if best < 0 || loadScore(w) < loadScore(workers[best]) {
			best = i
		}
	}
	if best < 0 {
		return "", schedErr(ReasonPoolOverloaded, false, "all %d workers of topic %q overloaded", len(workers), req.Topic)
	}
	return workers[best].WorkerID, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// satisfies reports whether a pool offering offered accepts a job requiring required.
func satisfies(offered, required []string) bool {
	if len(offered) == 0 {
		return len(required) == 0
	}
	for _, r := range required {
		if !containsFold(offered, r) {
			return false
		}
	}
	return true
}
