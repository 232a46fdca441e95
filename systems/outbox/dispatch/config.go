package dispatch

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Defaults. The timeouts and retry policy are engine/'s, so the two designs
// differ only where the design does.
const (
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
	DefaultSweepBatch           = 200
	DefaultRelayInterval        = 1 * time.Second
	DefaultRelayLease           = 10 * time.Second
	DefaultRelayBatch           = 100
	DefaultSentRetention        = 24 * time.Hour
	DefaultConsumerTTL          = 24 * time.Hour
	backoffMaxShift             = 10
	// staleRetries bounds the re-reads a handler makes when a compare-and-
	// transition finds the job moved on, before it asks the bus for a retry.
	staleRetries = 3
)

// Config configures a Dispatcher. Zero values mean the documented defaults,
// filled in by withDefaults; Redis, Bus, Clock and Random are required.
type Config struct {
	Redis  redis.UniversalClient
	Bus    Bus
	Clock  Clock
	Random Random
	// Registerer receives the metrics; nil means a private registry.
	Registerer prometheus.Registerer
	Logger     *slog.Logger // nil: discard
	Routing    Routing

	StoreRetryDelay      time.Duration // redelivery delay after a store error (1s)
	BackoffBase          time.Duration // pick-failure backoff base (1s)
	BackoffMax           time.Duration // 30s
	BackoffJitterMax     time.Duration // 500ms
	MaxSchedulingRetries int           // attempts before FAILED with the last cause (50)
	// NoPoolMappingGrace is how long a topic with no pool is retried before
	// the job fails no_pool_mapping_topic (30s): long enough for a mapping
	// published after its topic to arrive, short enough that unroutable jobs
	// do not hold the bus's in-flight slots for the whole retry budget.
	NoPoolMappingGrace time.Duration

	DispatchTimeout   time.Duration // DISPATCHED longer than this -> TIMEOUT (300s)
	RunningTimeout    time.Duration // RUNNING longer than this -> TIMEOUT (900s)
	ReconcileInterval time.Duration // reconciler tick (30s)
	ReplayAfter       time.Duration // PENDING/SCHEDULED/RETRYING older than this are re-driven (60s)
	ReplayInterval    time.Duration // replayer tick (30s)
	SweepBatch        int64         // jobs examined per state per tick (200)
	WorkerTTL         time.Duration // a worker unheard of for this long is gone (30s)

	RelayInterval time.Duration // relay tick (1s)
	// RelayLease is how long a claimed outbox entry is invisible to other
	// relays (10s). A publish that failed, or a relay that died before marking
	// the entry sent, is retried when the lease runs out.
	RelayLease    time.Duration
	RelayBatch    int64         // entries claimed per relay tick (100)
	SentRetention time.Duration // a sent entry is kept this long for audit (24h)
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.StoreRetryDelay, DefaultStoreRetryDelay)
	def(&c.BackoffBase, DefaultBackoffBase)
	def(&c.BackoffMax, DefaultBackoffMax)
	def(&c.NoPoolMappingGrace, DefaultNoPoolMappingGrace)
	def(&c.BackoffJitterMax, DefaultBackoffJitterMax)
	def(&c.DispatchTimeout, DefaultDispatchTimeout)
	def(&c.RunningTimeout, DefaultRunningTimeout)
	def(&c.ReconcileInterval, DefaultReconcileInterval)
	def(&c.ReplayAfter, DefaultReplayAfter)
	def(&c.ReplayInterval, DefaultReplayInterval)
	def(&c.WorkerTTL, DefaultWorkerTTL)
	def(&c.RelayInterval, DefaultRelayInterval)
	def(&c.RelayLease, DefaultRelayLease)
	def(&c.SentRetention, DefaultSentRetention)
	if c.MaxSchedulingRetries == 0 {
		c.MaxSchedulingRetries = DefaultMaxSchedulingRetries
	}
	if c.SweepBatch == 0 {
		c.SweepBatch = DefaultSweepBatch
	}
	if c.RelayBatch == 0 {
		c.RelayBatch = DefaultRelayBatch
	}
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
