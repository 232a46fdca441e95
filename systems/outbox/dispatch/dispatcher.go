package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
)

// Dispatcher is one replica: the request, result, cancel and heartbeat
// handlers, the relay, the reconciler and the replayer. Its handlers may run
// concurrently, in this replica and others: there is no job lock, every write
// is a compare-and-transition on the job's version.
type Dispatcher struct {
	cfg     Config
	store   *JobStore
	bus     Bus
	clock   Clock
	rand    Random
	log     *slog.Logger
	metrics *metrics
	workers *workerRegistry
	routing atomic.Pointer[Routing]
	relayID string
}

// New builds a dispatcher replica.
func New(cfg Config) (*Dispatcher, error) {
	switch {
	case cfg.Redis == nil:
		return nil, errors.New("outbox dispatch: Config.Redis is required")
	case cfg.Bus == nil:
		return nil, errors.New("outbox dispatch: Config.Bus is required")
	case cfg.Clock == nil:
		return nil, errors.New("outbox dispatch: Config.Clock is required")
	case cfg.Random == nil:
		return nil, errors.New("outbox dispatch: Config.Random is required")
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{cfg: cfg, store: NewJobStore(cfg.Redis), bus: cfg.Bus, clock: cfg.Clock,
		rand: cfg.Random, log: cfg.Logger, metrics: m, workers: newWorkerRegistry(cfg.WorkerTTL)}
	d.relayID = "relay-" + newToken(cfg.Random)
	d.SetRouting(cfg.Routing)
	return d, nil
}

// Store returns the dispatcher's job store.
func (d *Dispatcher) Store() *JobStore { return d.store }

// SetRouting replaces the topic-to-pool routing; later picks see the new one.
func (d *Dispatcher) SetRouting(r Routing) { d.routing.Store(&r) }

// HandleHeartbeat records a worker's load report.
func (d *Dispatcher) HandleHeartbeat(_ context.Context, hb Heartbeat) error {
	if hb.WorkerID != "" {
		d.workers.observe(hb, d.clock.Now())
	}
	return nil
}

// backoff is min(base<<attempt + jitter, max) with jitter below BackoffJitterMax.
func (d *Dispatcher) backoff(attempt int) time.Duration {
	delay := d.cfg.BackoffBase << max(min(attempt, backoffMaxShift), 0)
	if j := d.cfg.BackoffJitterMax; j > 0 {
		delay += time.Duration(d.rand.Uint64() % uint64(j))
	}
	return min(delay, d.cfg.BackoffMax)
}

// retry builds the retry-after error for phase and counts it.
func (d *Dispatcher) retry(phase RetryPhase, delay time.Duration, err error) error {
	d.metrics.retry.WithLabelValues(string(phase)).Inc()
	return &RetryAfterError{Err: err, Delay: delay, Phase: phase}
}

// newToken is a 64-bit random id in hex: dispatch ids and relay ids.
func newToken(r Random) string { return strconv.FormatUint(r.Uint64(), 16) }
