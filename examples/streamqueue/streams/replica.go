package streams

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Replica is one dispatcher process: a router, a reaper, and the handlers
// of results and heartbeats.
type Replica struct {
	cfg     Config
	scripts scripts

	mu      sync.Mutex
	routing map[string][]string
	workers map[string]workerSeen
	next    int // round-robin position over a topic's pools

	ignored, requeued *prometheus.CounterVec
}

type workerSeen struct {
	pool string
	at   time.Time
}

// NewReplica builds a replica; Start runs its loops.
func NewReplica(cfg Config) (*Replica, error) {
	cfg = cfg.withDefaults()
	r := &Replica{cfg: cfg, scripts: newScripts(cfg.Defect), routing: cfg.Routing, workers: map[string]workerSeen{},
		ignored: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamqueue_result_ignored_total",
			Help: "results not applied, by reason"}, []string{"reason"}),
		requeued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamqueue_requeued_total",
			Help: "jobs put back to QUEUED, by cause"}, []string{"cause"})}
	for _, c := range []prometheus.Collector{r.ignored, r.requeued} {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// SetRouting replaces the topic routing (a configuration rollout).
func (r *Replica) SetRouting(routing map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routing = routing
}

// Start spawns the router and the reaper.
func (r *Replica) Start() {
	r.cfg.Spawn("router", func(ctx context.Context) { r.loop(ctx, PollInterval, r.Route) })
	r.cfg.Spawn("reaper", func(ctx context.Context) { r.loop(ctx, r.cfg.ReapInterval, r.Reap) })
}

func (r *Replica) loop(ctx context.Context, every time.Duration, tick func(context.Context) error) {
	for {
		_ = tick(ctx) // a failed tick is tried again on the next one
		if r.cfg.Clock.Sleep(ctx, every) != nil {
			return
		}
	}
}

// HandleHeartbeat notes a worker as live.
func (r *Replica) HandleHeartbeat(_ context.Context, hb Heartbeat) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.workers[hb.WorkerID] = workerSeen{pool: hb.Pool, at: r.cfg.Clock.Now()}
	return nil
}

// pick is the pool a topic's job goes to, round robin over its pools with
// a live worker, or why there is none.
func (r *Replica) pick(topic string) (pool, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pools, routed := r.routing[topic]
	if !routed || len(pools) == 0 {
		return "", ReasonNoTopicPool
	}
	now := r.cfg.Clock.Now()
	var live []string
	for _, p := range pools {
		for _, w := range r.workers {
			if w.pool == p && now.Sub(w.at) <= WorkerTTL {
				live = append(live, p)
				break
			}
		}
	}
	if len(live) == 0 {
		return "", ReasonNoWorkers
	}
	sort.Strings(live)
	r.next++
	return live[r.next%len(live)], "ok"
}

// Route takes the submit entries due to this replica: those another
// router (or this one) left pending past RouteRetry, then new ones.
func (r *Replica) Route(ctx context.Context) error {
	rdb := r.cfg.Redis
	claimed, _, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: SubmitStream, Group: RoutersGroup,
		Consumer: r.cfg.Name, MinIdle: RouteRetry, Start: "0", Count: batch}).Result()
	if err != nil && strings.Contains(err.Error(), "NOGROUP") {
		return createGroup(ctx, rdb, SubmitStream, RoutersGroup)
	}
	if err != nil {
		return err
	}
	fresh, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: RoutersGroup, Consumer: r.cfg.Name,
		Streams: []string{SubmitStream, ">"}, Count: batch, Block: -1}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	entries := claimed
	for _, s := range fresh {
		entries = append(entries, s.Messages...)
	}
	var errs []error
	for _, m := range entries {
		id := field(m, "job")
		if id == "" {
			errs = append(errs, rdb.XAck(ctx, SubmitStream, RoutersGroup, m.ID).Err())
			continue
		}
		topic, err := rdb.HGet(ctx, JobPrefix+id, "topic").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			errs = append(errs, err)
			continue
		}
		pool, status := r.pick(topic)
		errs = append(errs, r.scripts.route.Run(ctx, rdb, []string{JobPrefix + id, WorkStream(pool), PoolsKey},
			"route", id, m.ID, status, pool, r.cfg.PickGrace.Milliseconds()).Err())
	}
	return errors.Join(errs...)
}

// Reap puts back (or times out) the jobs of work entries dispatched a
// lease ago, read by a worker or not, and deletes those entries.
func (r *Replica) Reap(ctx context.Context) error {
	rdb := r.cfg.Redis
	pools, err := rdb.SMembers(ctx, PoolsKey).Result()
	if err != nil {
		return err
	}
	sort.Strings(pools)
	lease := r.cfg.Lease
	if r.cfg.Defect == ReapIgnoresLease {
		lease = 0
	}
	var errs []error
	for _, pool := range pools {
		ids, err := r.scripts.reap.Run(ctx, rdb, []string{WorkStream(pool)}, "reap", lease.Milliseconds(),
			r.cfg.MaxAttempts, batch).StringSlice()
		if err == nil && len(ids) > 0 {
			err = rdb.XDel(ctx, WorkStream(pool), ids...).Err()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// HandleResult applies a worker's result; an error asks for redelivery.
func (r *Replica) HandleResult(ctx context.Context, res Result) error {
	if res.JobID == "" {
		return nil
	}
	st, err := r.scripts.result.Run(ctx, r.cfg.Redis, []string{JobPrefix + res.JobID},
		"result", res.JobID, res.Gen, res.Outcome, res.ResultPtr, r.cfg.MaxAttempts).Text()
	switch {
	case err != nil:
		return err
	case st == Queued:
		r.requeued.WithLabelValues("retryable").Inc()
	case st == "terminal" || st == "not_dispatched" || st == "stale" || st == "unknown_job":
		r.ignored.WithLabelValues(st).Inc()
	}
	return nil
}
