package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Consumer is the worker side of the outbox: it lets a worker execute each
// dispatch id once, whatever the relay and the broker deliver. It is the
// guarantee the outbox design leans on for a re-publish outside the broker's
// de-duplication window.
//
// Accept marks the id before the worker executes: a worker that dies between
// Accept and the execution has not run the job, and no redelivery of that
// dispatch will run it; the reconciler's running timeout resolves the job.
// The same holds for an Accept whose reply was lost after Redis applied it:
// the redelivery looks like a duplicate. At most one execution per dispatch
// id is the trade.
type Consumer struct {
	rdb        redis.UniversalClient
	ttl        time.Duration
	duplicates prometheus.Counter
}

// ConsumerConfig configures a Consumer. Zero values mean the defaults.
type ConsumerConfig struct {
	// TTL is how long a dispatch id is remembered (24h); it must outlast the
	// relay's longest redelivery horizon (a relay outage plus a lease).
	TTL time.Duration
	// Registerer receives outbox_consumer_duplicate_total; nil means a private registry.
	Registerer prometheus.Registerer
}

func (c ConsumerConfig) withDefaults() ConsumerConfig {
	if c.TTL == 0 {
		c.TTL = DefaultConsumerTTL
	}
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	return c
}

// NewConsumer returns a consumer remembering dispatch ids in rdb.
func NewConsumer(rdb redis.UniversalClient, cfg ConsumerConfig) (*Consumer, error) {
	cfg = cfg.withDefaults()
	dup := prometheus.NewCounter(prometheus.CounterOpts{Name: "outbox_consumer_duplicate_total",
		Help: "Deliveries the idempotent consumer refused because their dispatch id was seen before."})
	if err := cfg.Registerer.Register(dup); err != nil {
		return nil, fmt.Errorf("register consumer metrics: %w", err)
	}
	return &Consumer{rdb: rdb, ttl: cfg.TTL, duplicates: dup}, nil
}

// Accept reports whether this is the first delivery of dispatchID (execute
// it) or a duplicate (ack it and do nothing). An error means the answer is
// unknown: do not execute; NAK so the delivery comes back.
func (c *Consumer) Accept(ctx context.Context, dispatchID string) (first bool, err error) {
	if dispatchID == "" {
		return false, fmt.Errorf("accept dispatch: empty dispatch id")
	}
	first, err = c.rdb.SetNX(ctx, consumedKeyPrefix+dispatchID, "1", c.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("accept dispatch %s: %w", dispatchID, err)
	}
	if !first {
		c.duplicates.Inc()
	}
	return first, nil
}

// acceptCurrentScript runs a dispatch only while the job is still dispatched
// or running under that dispatch's generation: -1 fenced, 1 first, 0 seen.
// The relay checks the job when it claims an entry, but a cancel or timeout
// can commit between that claim and the publish; this check at the worker,
// atomic with the mark, closes the window.
var acceptCurrentScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'state')
if (st ~= ARGV[1] and st ~= ARGV[2]) or redis.call('HGET', KEYS[1], 'dispatch_gen') ~= ARGV[3] then
  return -1
end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[4]) then return 1 end
return 0`)

// AcceptCurrent is Accept fenced by the job's state: it reports false,
// without marking the id, for a dispatch whose job has since moved on (a
// cancel, a timeout, a later generation), so a copy published after the
// job ended is never run.
func (c *Consumer) AcceptCurrent(ctx context.Context, jobID string, gen int, dispatchID string) (first bool, err error) {
	if dispatchID == "" || jobID == "" {
		return false, fmt.Errorf("accept dispatch: empty job or dispatch id")
	}
	n, err := acceptCurrentScript.Run(ctx, c.rdb, []string{jobKey(jobID), consumedKeyPrefix + dispatchID},
		string(StateDispatched), string(StateRunning), gen, c.ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("accept dispatch %s: %w", dispatchID, err)
	}
	if n == 0 {
		c.duplicates.Inc()
	}
	return n == 1, nil
}
