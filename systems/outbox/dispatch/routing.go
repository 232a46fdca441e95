package dispatch

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Routing maps topics to the worker pools that serve them. It can be replaced
// while the dispatcher runs. (Preferred pools and capability requirements,
// which engine/ supports, are out of this design's scope.)
type Routing struct {
	Topics map[string][]string
}

// SchedulingError is a failed pick with its root cause; every cause is retried
// with backoff until the attempt cap, whose DLQ entry then names it.
type SchedulingError struct {
	Code   ReasonCode
	Detail string
}

func (e *SchedulingError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Detail) }

// overloadRatio: a worker at or above this share of its slots (or of CPU or
// GPU) takes no more jobs.
const overloadRatio = 0.9

// workerRegistry is one replica's view of the workers, from their heartbeats.
type workerRegistry struct {
	mu      sync.Mutex
	ttl     time.Duration
	workers map[string]*workerLoad
}

type workerLoad struct {
	hb   Heartbeat
	seen time.Time
}

func newWorkerRegistry(ttl time.Duration) *workerRegistry {
	return &workerRegistry{ttl: ttl, workers: map[string]*workerLoad{}}
}

func (r *workerRegistry) observe(hb Heartbeat, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.workers[hb.WorkerID] = &workerLoad{hb: hb, seen: now}
}

// noteDispatched counts a job against the worker until its next heartbeat.
func (r *workerRegistry) noteDispatched(workerID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.workers[workerID]; ok {
		w.hb.Active++
	}
}

// pick returns the least-loaded live worker of the topic's pools: score =
// active + cpu/100 + gpu/100, ties broken by worker id (never by map order).
func (r *workerRegistry) pick(routing *Routing, topic string, now time.Time) (string, error) {
	pools := routing.Topics[topic]
	if len(pools) == 0 {
		return "", &SchedulingError{Code: ReasonNoPoolMappingTopic, Detail: fmt.Sprintf("topic %q has no pool", topic)}
	}
	inPool := map[string]bool{}
	for _, p := range pools {
		inPool[p] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.workers))
	for id := range r.workers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	best, bestScore, live := "", 0.0, 0
	for _, id := range ids {
		w := r.workers[id]
		if !inPool[w.hb.Pool] || now.Sub(w.seen) > r.ttl {
			continue
		}
		live++
		if overloaded(w.hb) {
			continue
		}
		score := float64(w.hb.Active) + w.hb.CPU/100 + w.hb.GPU/100
		if best == "" || score < bestScore {
			best, bestScore = id, score
		}
	}
	switch {
	case best != "":
		return best, nil
	case live == 0:
		return "", &SchedulingError{Code: ReasonNoWorkers, Detail: fmt.Sprintf("no live worker in pools %v", pools)}
	default:
		return "", &SchedulingError{Code: ReasonPoolOverloaded, Detail: fmt.Sprintf("all %d workers of pools %v overloaded", live, pools)}
	}
}

func overloaded(hb Heartbeat) bool {
	if hb.MaxParallel > 0 && float64(hb.Active)/float64(hb.MaxParallel) >= overloadRatio {
		return true
	}
	return hb.CPU >= 100*overloadRatio || hb.GPU >= 100*overloadRatio
}
