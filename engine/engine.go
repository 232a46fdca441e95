// Package engine is a dispatch engine for AI-agent jobs on Redis and a message
// bus: the scheduler (request, result and cancel handlers), the reconciler, the
// pending replayer and workflow-run admission.
//
// It writes a job's state before it publishes (DISPATCHED before the bus sees the
// job), rolls back on a failed publish, fails closed when it cannot read a state,
// serialises each job behind a token-guarded lock with renewal and fencing, and
// enforces the transition table inside Redis so no path can resurrect a terminal
// job.
//
// The engine never reads the wall clock, never draws global randomness and never
// starts a goroutine: time, randomness, the store client, the bus and metrics are
// ports (ports.go), so a simulator can run it deterministically.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Defaults, as the reference deployment runs them.
const (
	DefaultLockTTL              = 60 * time.Second
	DefaultLockPoll             = 25 * time.Millisecond
	DefaultLockWait             = 2 * time.Second
	DefaultLockBusyRetry        = 500 * time.Millisecond
	DefaultLockRenewFailures    = 3
	DefaultStoreRetryDelay      = 1 * time.Second
	DefaultBackoffBase          = 1 * time.Second
	DefaultBackoffMax           = 30 * time.Second
	DefaultBackoffJitterMax     = 500 * time.Millisecond
	DefaultMaxSchedulingRetries = 50
	DefaultNoPoolMappingGrace   = 30 * time.Second
	DefaultDispatchTimeout      = 300 * time.Second
	DefaultRunningTimeout       = 900 * time.Second
	DefaultReconcileInterval    = 30 * time.Second
	DefaultReplayAfter          = 60 * time.Second
	DefaultReplayInterval       = 30 * time.Second
	DefaultWorkerTTL            = 30 * time.Second
	DefaultDedupWindow          = 90 * time.Second
	DefaultSweepBatch           = 200
	backoffMaxShift             = 10
)

// Config configures an Engine. Zero values mean the documented defaults, filled
// in by withDefaults; Redis, Bus, Clock and Random are required.
type Config struct {
	Redis  redis.UniversalClient
	Bus    Bus
	Clock  Clock
	Random Random
	// Registerer receives the metrics; nil means a private registry.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	Routing    Routing

	LockTTL           time.Duration // job lock expiry (60s); renewed every TTL/3
	LockPoll          time.Duration // poll while the lock is busy (25ms)
	LockWait          time.Duration // give up after (2s)
	LockBusyRetry     time.Duration // redelivery delay when the lock stayed busy (500ms)
	LockRenewFailures int           // failed renewals in a row before the lock is abandoned (3)

	StoreRetryDelay      time.Duration // redelivery delay after a store error (1s)
	BackoffBase          time.Duration // 1s
	BackoffMax           time.Duration // 30s
	BackoffJitterMax     time.Duration // 500ms
	MaxSchedulingRetries int           // 50

	// NoPoolMappingGrace is how long a permanent no_pool_mapping cause is retried
	// before the job fails with that cause (30s, for rollout races).
	NoPoolMappingGrace time.Duration
	// TenantMaxActive caps DISPATCHED+RUNNING jobs per tenant; absent means no cap.
	TenantMaxActive map[string]int

	DispatchTimeout        time.Duration            // DISPATCHED longer than this -> TIMEOUT (300s)
	DispatchTimeoutByTopic map[string]time.Duration // per-topic override
	RunningTimeout         time.Duration            // RUNNING longer than this -> TIMEOUT (900s)
	ReconcileInterval      time.Duration            // reconciler tick (30s)
	ReplayAfter            time.Duration            // PENDING/SCHEDULED/RETRYING older than this are re-driven (60s)
	ReplayInterval         time.Duration            // replayer tick (30s)
	SweepBatch             int64                    // jobs examined per state per tick (200)
	WorkerTTL              time.Duration            // a worker unheard of for this long is gone (30s)

	// DedupWindow is how long after a dispatch's first publish attempt the engine
	// may still re-publish it under the same message id, trusting the broker to
	// drop the copy if the first one was stored (90s). It must be shorter than the
	// broker's duplicate window (JetStream: 2m) by at least the worst clock skew
	// between replicas plus the worst publish latency. Past it, a dispatch whose
	// publish failed is never re-published: the job waits DISPATCHED for the first
	// copy's result or the dispatch timeout.
	DedupWindow time.Duration
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.LockTTL, DefaultLockTTL)
	def(&c.LockPoll, DefaultLockPoll)
	def(&c.LockWait, DefaultLockWait)
	def(&c.LockBusyRetry, DefaultLockBusyRetry)
	def(&c.StoreRetryDelay, DefaultStoreRetryDelay)
	def(&c.BackoffBase, DefaultBackoffBase)
	def(&c.BackoffMax, DefaultBackoffMax)
	def(&c.BackoffJitterMax, DefaultBackoffJitterMax)
	def(&c.NoPoolMappingGrace, DefaultNoPoolMappingGrace)
	def(&c.DispatchTimeout, DefaultDispatchTimeout)
	def(&c.RunningTimeout, DefaultRunningTimeout)
	def(&c.ReconcileInterval, DefaultReconcileInterval)
	def(&c.ReplayAfter, DefaultReplayAfter)
	def(&c.ReplayInterval, DefaultReplayInterval)
	def(&c.WorkerTTL, DefaultWorkerTTL)
	def(&c.DedupWindow, DefaultDedupWindow)
	if c.LockRenewFailures == 0 {
		c.LockRenewFailures = DefaultLockRenewFailures
	}
	if c.MaxSchedulingRetries == 0 {
		c.MaxSchedulingRetries = DefaultMaxSchedulingRetries
	}
	if c.SweepBatch == 0 {
		c.SweepBatch = DefaultSweepBatch
	}
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Engine is one scheduler replica. Its handlers may run concurrently; each job is
// serialised by its Redis lock.
type Engine struct {
	cfg      Config
	store    *JobStore
	locks    *locker
	bus      Bus
	clock    Clock
	rand     Random
	log      *slog.Logger
	metrics  *schedulerMetrics
	registry *WorkerRegistry
	routing  atomic.Pointer[Routing]
}

// New builds an engine replica.
func New(cfg Config) (*Engine, error) {
	switch {
	case cfg.Redis == nil:
		return nil, errors.New("engine: Config.Redis is required")
	case cfg.Bus == nil:
		return nil, errors.New("engine: Config.Bus is required")
	case cfg.Clock == nil:
		return nil, errors.New("engine: Config.Clock is required")
	case cfg.Random == nil:
		return nil, errors.New("engine: Config.Random is required")
	}
	cfg = cfg.withDefaults()
	m, err := newSchedulerMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:      cfg,
		store:    NewJobStore(cfg.Redis),
		locks:    &locker{rdb: cfg.Redis, clock: cfg.Clock, rand: cfg.Random},
		bus:      cfg.Bus,
		clock:    cfg.Clock,
		rand:     cfg.Random,
		log:      cfg.Logger,
		metrics:  m,
		registry: NewWorkerRegistry(cfg.WorkerTTL),
	}
	e.SetRouting(cfg.Routing)
	return e, nil
}

// Store returns the engine's job store.
func (e *Engine) Store() *JobStore { return e.store }

// SetRouting replaces the topic-to-pool routing; later picks see the new one.
func (e *Engine) SetRouting(r Routing) { e.routing.Store(&r) }

// HandleHeartbeat records a worker's load report.
func (e *Engine) HandleHeartbeat(_ context.Context, hb Heartbeat) error {
	if hb.WorkerID == "" {
		return nil
	}
	e.registry.Observe(hb, e.clock.Now())
	return nil
}

// backoff is min(base<<attempt + jitter, max) with jitter below BackoffJitterMax.
func (e *Engine) backoff(attempt int) time.Duration {
	shift := max(min(attempt, backoffMaxShift), 0)
	d := e.cfg.BackoffBase << shift
	if j := e.cfg.BackoffJitterMax; j > 0 {
		d += time.Duration(e.rand.Uint64() % uint64(j))
	}
	return min(d, e.cfg.BackoffMax)
}

// retry builds the retry-after error for phase and counts it.
func (e *Engine) retry(phase RetryPhase, delay time.Duration, err error) error {
	e.metrics.retry.WithLabelValues(string(phase)).Inc()
	return &RetryAfterError{Err: err, Delay: delay, Phase: phase}
}

// withJobLock runs fn holding the job's lock. The lock is renewed every TTL/3;
// after LockRenewFailures failed renewals fn's context is cancelled and every
// store write fn attempts from then on is refused (by the context check, and by
// the token check inside the transition script).
func (e *Engine) withJobLock(ctx context.Context, jobID string, fn func(ctx context.Context, lock *heldLock) error) error {
	held, err := e.locks.acquire(ctx, jobLockKey(jobID), lockSpec{TTL: e.cfg.LockTTL, Poll: e.cfg.LockPoll, Wait: e.cfg.LockWait})
	if errors.Is(err, ErrLockBusy) {
		return e.retry(PhaseLock, e.cfg.LockBusyRetry, err)
	}
	if err != nil {
		return e.retry(PhaseStore, e.cfg.StoreRetryDelay, err)
	}
	sectionCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	renewal := &renewedLock{
		l: e.locks, held: held, ttl: e.cfg.LockTTL, maxFailures: e.cfg.LockRenewFailures,
		cancel: cancel, onAbandon: e.metrics.lockFenced.Inc,
	}
	renewal.schedule()
	ferr := fn(sectionCtx, held)
	stillHeld := renewal.stop()
	// Compare-and-delete is safe even after abandonment: it never deletes a lock
	// another handler has taken since.
	if rerr := e.locks.release(ctx, held); rerr != nil {
		e.log.Warn("job lock release failed; it expires on its own", "job_id", jobID, "error", rerr)
	}
	if !stillHeld && ferr != nil {
		if _, ok := AsRetryAfter(ferr); !ok {
			return e.retry(PhaseStore, e.cfg.StoreRetryDelay, fmt.Errorf("job %s: %w", jobID, ferr))
		}
	}
	return ferr
}
