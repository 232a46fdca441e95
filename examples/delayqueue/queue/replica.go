package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Replica is one dispatcher process: a poller, a reaper, and the handlers
// of results and heartbeats.
type Replica struct {
	cfg     Config
	scripts scripts

	mu      sync.Mutex
	routing map[string][]string
	workers map[string]workerSeen
	next    int // round-robin position

	published         prometheus.Counter
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
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "delayqueue_dispatch_published_total",
			Help: "dispatches the broker acknowledged"}),
		ignored: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "delayqueue_result_ignored_total",
			Help: "results not applied, by reason"}, []string{"reason"}),
		requeued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "delayqueue_requeued_total",
			Help: "jobs put back to QUEUED, by cause"}, []string{"cause"})}
	for _, c := range []prometheus.Collector{r.published, r.ignored, r.requeued} {
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

// Start spawns the poller and the reaper.
func (r *Replica) Start() {
	r.cfg.Spawn("poller", func(ctx context.Context) { r.loop(ctx, PollInterval, r.Poll) })
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

// placement is, per routed topic, its live workers in id order.
func (r *Replica) placement(now time.Time) (topics []string, live map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	live = map[string][]string{}
	for topic, pools := range r.routing {
		topics = append(topics, topic)
		for id, w := range r.workers {
			for _, p := range pools {
				if w.pool == p && now.Sub(w.at) <= WorkerTTL {
					live[topic] = append(live[topic], id)
				}
			}
		}
		sort.Strings(live[topic])
	}
	sort.Strings(topics)
	return topics, live
}

// pick takes the next of a topic's live workers, round robin.
func (r *Replica) pick(workers []string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	return workers[r.next%len(workers)]
}

// due lists up to n members of a sorted set due by the store's clock.
func (r *Replica) due(ctx context.Context, key string, n int) ([]string, error) {
	return r.scripts.due.Run(ctx, r.cfg.Redis, []string{key}, "due", n).StringSlice()
}

// Poll claims the due jobs and publishes their dispatches. Only the store
// knows what is due by its clock: an empty ready set is the one idle case.
func (r *Replica) Poll(ctx context.Context) error {
	rdb := r.cfg.Redis
	if n, err := rdb.ZCard(ctx, ReadyKey).Result(); err != nil || n == 0 {
		return err
	}
	topics, live := r.placement(r.cfg.Clock.Now())
	if r.cfg.Defect == PublishBeforeWrite {
		r.publishAhead(ctx, live)
	}
	args := []any{"claim", claimBatch, r.cfg.MaxAttempts, r.cfg.PickGrace.Milliseconds(), waitRetry.Milliseconds()}
	for _, t := range topics {
		status := ReasonNoWorkers
		if len(live[t]) > 0 {
			status = "ok"
		}
		args = append(args, t, status, r.cfg.leaseOf(t).Milliseconds())
	}
	rows, err := r.scripts.claim.Run(ctx, rdb, []string{ReadyKey, DispatchedKey}, args...).Slice()
	if err != nil {
		return err
	}
	var errs []error
	for _, row := range rows {
		f, _ := row.([]any)
		id, what := fmt.Sprint(f[0]), fmt.Sprint(f[1])
		var err error
		switch {
		case what == "expired":
			err = r.scripts.fail.Run(ctx, rdb, []string{JobPrefix + id, ReadyKey}, "fail", id, fmt.Sprint(f[2])).Err()
		case what == "claimed" && r.cfg.Defect != PublishBeforeWrite:
			gen, _ := f[3].(int64)
			attempt, _ := f[4].(int64)
			p := Packet{JobID: id, Topic: fmt.Sprint(f[2]), Gen: int(gen), DispatchID: fmt.Sprintf("%s#%d", id, gen), Attempt: int(attempt)}
			err = r.publish(ctx, r.pick(live[p.Topic]), p)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// publish sends a dispatch, trying a failed publish twice more under the
// same message id (the broker drops a copy it already stored). A dispatch
// never published is put back by the reaper when its lease runs out.
func (r *Replica) publish(ctx context.Context, worker string, p Packet) error {
	data, _ := json.Marshal(p) // plain fields: cannot fail
	var err error
	for try := 0; try < 3; try++ {
		if err = r.cfg.Bus.Publish(ctx, WorkerSubject(worker), fmt.Sprintf("dq:%s:%d", p.JobID, p.Gen), data); err == nil {
			r.published.Inc()
			return nil
		}
		if r.cfg.Clock.Sleep(ctx, 200*time.Millisecond) != nil {
			break
		}
	}
	return err
}

// publishAhead is the planted publish-before-write: it dispatches what it
// expects the claim to take before the claim is written.
func (r *Replica) publishAhead(ctx context.Context, live map[string][]string) {
	due, _ := r.due(ctx, ReadyKey, claimBatch)
	for _, id := range due {
		j, err := r.cfg.Redis.HMGet(ctx, JobPrefix+id, "state", "topic", "gen", "attempts").Result()
		if err != nil || j[0] != Queued || len(live[fmt.Sprint(j[1])]) == 0 {
			continue
		}
		gen, _ := strconv.Atoi(fmt.Sprint(j[2]))
		attempts, _ := strconv.Atoi(fmt.Sprint(j[3]))
		p := Packet{JobID: id, Topic: fmt.Sprint(j[1]), Gen: gen + 1, DispatchID: fmt.Sprintf("%s#%d", id, gen+1), Attempt: attempts + 1}
		_ = r.publish(ctx, r.pick(live[p.Topic]), p)
	}
}

// Reap puts back, or times out, the dispatches whose lease ran out.
func (r *Replica) Reap(ctx context.Context) error {
	n, err := r.cfg.Redis.ZCard(ctx, DispatchedKey).Result()
	if err != nil || n == 0 {
		return err
	}
	ids, err := r.due(ctx, DispatchedKey, claimBatch)
	var errs []error
	for _, id := range ids {
		st, err := r.scripts.expire.Run(ctx, r.cfg.Redis, []string{JobPrefix + id, ReadyKey, DispatchedKey},
			"expire", id, r.cfg.MaxAttempts).Text()
		if st == Queued {
			r.requeued.WithLabelValues("lease_expired").Inc()
		}
		errs = append(errs, err)
	}
	return errors.Join(append(errs, err)...)
}

// HandleResult applies a worker's result; an error asks for redelivery.
func (r *Replica) HandleResult(ctx context.Context, res Result) error {
	if res.JobID == "" {
		return nil
	}
	backoff := time.Second<<min(res.Gen, 5) + time.Duration(r.cfg.Random.Uint64()%500)*time.Millisecond
	st, err := r.scripts.result.Run(ctx, r.cfg.Redis, []string{JobPrefix + res.JobID, ReadyKey, DispatchedKey},
		"result", res.JobID, res.Gen, res.Outcome, res.ResultPtr, backoff.Milliseconds(), r.cfg.MaxAttempts).Text()
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
