package store

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// liveRedis is the store of a live run: a real Redis server. The actors'
// clients carry the same hook as in a simulation (yield point, ground truth
// through the observer); the observer's reads go through a client of their
// own, outside the hook. Only this process writes the database, one actor at
// a time, so a read right after a command sees what that command left.
type liveRedis struct {
	opts *redis.Options
	view *redis.Client
}

// viewTimeout bounds one read of the ground truth.
const viewTimeout = 5 * time.Second

// NewLive returns the store of a live world on the Redis server opts name.
// The database must be empty unless flush is set, which empties it first: a
// live run's ground truth is everything in it.
func NewLive(env kernel.Env, spec sut.Spec, opts *redis.Options, flush bool) (*Store, error) {
	o := *opts
	o.Protocol, o.DisableIdentity = 2, true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	view := redis.NewClient(&o)
	ctx, cancel := context.WithTimeout(context.Background(), viewTimeout)
	defer cancel()
	if err := view.Ping(ctx).Err(); err != nil {
		_ = view.Close()
		return nil, fmt.Errorf("redis %s: %w", o.Addr, err)
	}
	n, err := view.DBSize(ctx).Result()
	if err != nil {
		_ = view.Close()
		return nil, fmt.Errorf("redis %s: %w", o.Addr, err)
	}
	if n > 0 && !flush {
		_ = view.Close()
		return nil, fmt.Errorf("redis %s db %d holds %d keys: a live run needs an empty database (or --disposable-target to empty it)",
			o.Addr, o.DB, n)
	}
	if n > 0 {
		if err := view.FlushDB(ctx).Err(); err != nil {
			_ = view.Close()
			return nil, fmt.Errorf("redis %s: flushdb: %w", o.Addr, err)
		}
	}
	env.Kernel.OnStall(func() { _ = view.Close() })
	return &Store{k: env.Kernel, host: env.Host, hist: env.History, obs: env.Observer, spec: spec,
		live:   &liveRedis{opts: &o, view: view},
		states: map[string]observed{}, lockKeys: map[string]string{}, unfinished: map[string]bool{}}, nil
}

// Live reports whether the store is a real Redis server.
func (s *Store) Live() bool { return s.live != nil }

// liveClient is an actor group's client of the real server, hooked as in a
// simulation but left to go-redis's own timeouts.
func (s *Store) liveClient(group string) *redis.Client {
	o := *s.live.opts
	o.MaxRetries = -1 // a hook's error is the command's outcome, as in a simulation
	o.PoolSize = 256
	c := redis.NewClient(&o)
	c.AddHook(&storeHook{s: s, group: group, resend: map[*kernel.Actor]sentAt{}})
	s.clients = append(s.clients, c)
	return c
}

func (l *liveRedis) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), viewTimeout)
}

func (l *liveRedis) keys() []string {
	ctx, cancel := l.ctx()
	defer cancel()
	var keys []string
	iter := l.view.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	sort.Strings(keys)
	return keys
}

func (l *liveRedis) get(key string) (string, bool) {
	ctx, cancel := l.ctx()
	defer cancel()
	v, err := l.view.Get(ctx, key).Result()
	return v, err == nil
}

func (l *liveRedis) members(key string) []string {
	ctx, cancel := l.ctx()
	defer cancel()
	m, _ := l.view.SMembers(ctx, key).Result()
	sort.Strings(m) // miniredis lists a set sorted
	return m
}

func (l *liveRedis) zscores(key string) map[string]float64 {
	ctx, cancel := l.ctx()
	defer cancel()
	zs, _ := l.view.ZRangeWithScores(ctx, key, 0, -1).Result()
	out := make(map[string]float64, len(zs))
	for _, z := range zs {
		out[z.Member.(string)] = z.Score
	}
	return out
}

func (l *liveRedis) field(key, field string) string {
	ctx, cancel := l.ctx()
	defer cancel()
	v, _ := l.view.HGet(ctx, key, field).Result()
	return v
}

func (l *liveRedis) ttl(key string) time.Duration {
	ctx, cancel := l.ctx()
	defer cancel()
	d, err := l.view.PTTL(ctx, key).Result()
	if err != nil || d < 0 {
		return 0 // as miniredis: no TTL, or no key
	}
	return d
}

func (l *liveRedis) hash(key string) (map[string]string, bool) {
	ctx, cancel := l.ctx()
	defer cancel()
	if t, err := l.view.Type(ctx, key).Result(); err != nil || t != "hash" {
		return nil, false
	}
	h, err := l.view.HGetAll(ctx, key).Result()
	return h, err == nil
}

func (l *liveRedis) streamEntry(key, id string) (sut.StreamEntry, bool) {
	entries := l.xrange(key, id, id)
	if len(entries) == 0 {
		return sut.StreamEntry{}, false
	}
	return entries[0], true
}

func (l *liveRedis) stream(key string) []sut.StreamEntry { return l.xrange(key, "-", "+") }

// xrange reads entries raw: go-redis's XMessage keeps the fields in a map,
// which loses the order XADD sent them in.
func (l *liveRedis) xrange(key, start, end string) []sut.StreamEntry {
	ctx, cancel := l.ctx()
	defer cancel()
	raw, _ := l.view.Do(ctx, "XRANGE", key, start, end).Slice()
	out := make([]sut.StreamEntry, 0, len(raw))
	for _, r := range raw {
		pair, ok := r.([]any)
		if !ok || len(pair) != 2 {
			continue
		}
		e := sut.StreamEntry{ID: fmt.Sprint(pair[0])}
		fields, _ := pair[1].([]any)
		for _, f := range fields {
			e.Values = append(e.Values, fmt.Sprint(f))
		}
		out = append(out, e)
	}
	return out
}

func (l *liveRedis) streamGroups(key string) []sut.StreamGroup {
	ctx, cancel := l.ctx()
	defer cancel()
	groups, _ := l.view.XInfoGroups(ctx, key).Result()
	out := make([]sut.StreamGroup, 0, len(groups))
	for _, g := range groups {
		sg := sut.StreamGroup{Name: g.Name, LastDeliveredID: g.LastDeliveredID}
		pending, _ := l.view.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 1 << 30}).Result()
		for _, p := range pending {
			sg.Pending = append(sg.Pending, sut.PendingEntry{ID: p.ID, Consumer: p.Consumer, Deliveries: int(p.RetryCount), Idle: p.Idle})
		}
		consumers, _ := l.view.XInfoConsumers(ctx, key, g.Name).Result()
		for _, c := range consumers {
			sg.Consumers = append(sg.Consumers, c.Name)
		}
		out = append(out, sg)
	}
	slices.SortFunc(out, func(a, b sut.StreamGroup) int { return strings.Compare(a.Name, b.Name) })
	return out
}
