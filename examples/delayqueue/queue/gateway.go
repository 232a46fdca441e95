package queue

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound is Status's answer for a job the store does not hold.
var ErrNotFound = errors.New("queue: job not found")

// Gateway is the client API: it writes to the store directly, nothing goes
// over the bus.
type Gateway struct {
	rdb     redis.UniversalClient
	scripts scripts
}

// NewGateway returns the API over rdb.
func NewGateway(rdb redis.UniversalClient) *Gateway {
	return &Gateway{rdb: rdb, scripts: newScripts("")}
}

// Submit stores a job as QUEUED, due now; a job id already stored (a retried
// submit, or a cancel that came first) is left as it is.
func (g *Gateway) Submit(ctx context.Context, id, topic, tenant string) error {
	return g.scripts.submit.Run(ctx, g.rdb, []string{JobPrefix + id, ReadyKey}, "submit", id, topic, tenant).Err()
}

// Cancel moves a queued job to CANCELLED. A dispatched job is CANCELLED
// once its dispatch ends without a final result; it is never dispatched
// again, and a worker running it is not told.
func (g *Gateway) Cancel(ctx context.Context, id string) error {
	return g.scripts.cancel.Run(ctx, g.rdb, []string{JobPrefix + id, ReadyKey, DispatchedKey}, "cancel", id).Err()
}

// Status is the job's state.
func (g *Gateway) Status(ctx context.Context, id string) (string, error) {
	st, err := g.rdb.HGet(ctx, JobPrefix+id, "state").Result()
	if errors.Is(err, redis.Nil) {
		return "", ErrNotFound
	}
	return st, err
}
