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
