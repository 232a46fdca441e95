package streams

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Work is a work entry as a worker pulled it.
type Work struct {
	JobID, DispatchID string
	Gen               int
}

// Puller is one worker process's consumer in its pool's "workers" group:
// it reads new entries, and acknowledges and deletes each once its result
// was sent. An entry it never finishes stays in the stream, pending under
// its name, until the reaper takes it back a lease after its dispatch.
type Puller struct {
	rdb      redis.UniversalClient
	stream   string
	consumer string
	defect   Defect
	// entries are the entry ids of the work this process pulled.
	entries map[string]string
}

// NewPuller is worker id's consumer of pool's stream.
func NewPuller(rdb redis.UniversalClient, pool, id string, d Defect) *Puller {
	return &Puller{rdb: rdb, stream: WorkStream(pool), consumer: id, defect: d, entries: map[string]string{}}
}

// Next reads up to n new entries. A stream or group not made yet (no job
// was routed to the pool, or the store lost them) is made, empty-handed.
func (p *Puller) Next(ctx context.Context, n int) ([]Work, error) {
	res, err := p.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: WorkersGroup, Consumer: p.consumer,
		Streams: []string{p.stream, ">"}, Count: int64(n), Block: -1}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil && strings.Contains(err.Error(), "NOGROUP") {
		return nil, createGroup(ctx, p.rdb, p.stream, WorkersGroup)
	}
	if err != nil {
		return nil, err
	}
	var out []Work
	for _, s := range res {
		for _, m := range s.Messages {
			w := Work{JobID: field(m, "job"), DispatchID: field(m, "dispatch_id")}
			w.Gen, _ = strconv.Atoi(field(m, "gen"))
			p.entries[w.DispatchID] = m.ID
			if p.defect == AckOnPull {
				_ = p.Done(ctx, w.DispatchID)
			}
			out = append(out, w)
		}
	}
	return out, nil
}

// Done acknowledges the entry of a dispatch this process pulled and
// deletes it: finished work leaves the stream, and the reaper takes back
// only what is still there a lease after its dispatch.
func (p *Puller) Done(ctx context.Context, dispatchID string) error {
	id, ok := p.entries[dispatchID]
	if !ok {
		return nil
	}
	if err := p.rdb.XAck(ctx, p.stream, WorkersGroup, id).Err(); err != nil {
		return err
	}
	if err := p.rdb.XDel(ctx, p.stream, id).Err(); err != nil {
		return err
	}
	delete(p.entries, dispatchID)
	return nil
}

// Idle is how long a worker waits after a pull that found nothing.
func (*Puller) Idle() time.Duration { return PollInterval }

func field(m redis.XMessage, name string) string {
	v, _ := m.Values[name].(string)
	return v
}

// createGroup makes a stream's group from its first entry, and the stream
// if there is none; a group that exists already is left as it is.
func createGroup(ctx context.Context, rdb redis.UniversalClient, stream, group string) error {
	err := rdb.XGroupCreateMkStream(ctx, stream, group, "0").Err()
	if err != nil && strings.Contains(err.Error(), "BUSYGROUP") {
		return nil
	}
	return err
}
