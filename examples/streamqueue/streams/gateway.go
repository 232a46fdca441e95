package streams

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound is Status's answer for a job the store does not hold.
var ErrNotFound = errors.New("streams: job not found")

// Gateway is the client API: it writes to the store directly.
type Gateway struct {
	rdb     redis.UniversalClient
	scripts scripts
}

// NewGateway returns the API over rdb.
func NewGateway(rdb redis.UniversalClient) *Gateway {
	return &Gateway{rdb: rdb, scripts: newScripts("")}
}

// Submit stores a job as QUEUED and adds its submit entry; a job id
// already stored (a retried submit, or a cancel that came first) is left as
// it is.
func (g *Gateway) Submit(ctx context.Context, id, topic, tenant string) error {
	return g.scripts.submit.Run(ctx, g.rdb, []string{JobPrefix + id}, "submit", id, topic, tenant).Err()
}

// Cancel moves a queued job to CANCELLED; a dispatched one ends CANCELLED
// when its dispatch ends without a final result.
func (g *Gateway) Cancel(ctx context.Context, id string) error {
	return g.scripts.cancel.Run(ctx, g.rdb, []string{JobPrefix + id}, "cancel", id).Err()
}

// Status is the job's state.
func (g *Gateway) Status(ctx context.Context, id string) (string, error) {
	st, err := g.rdb.HGet(ctx, JobPrefix+id, "state").Result()
	if errors.Is(err, redis.Nil) {
		return "", ErrNotFound
	}
	return st, err
}
