package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/sim/store"
)

// The simulated store against redis-server for what a dispatcher built on
// Redis Streams sends: XADD (explicit and "ms-*" IDs, MAXLEN), XREADGROUP
// (new entries and a consumer's history), XACK, XCLAIM (min-idle-time, IDLE,
// RETRYCOUNT, FORCE, JUSTID), XAUTOCLAIM (cursor, COUNT, JUSTID, deleted
// entries), XPENDING (summary, IDLE, consumer), XDEL, XTRIM (MAXLEN, MINID),
// XGROUP, XLEN, XRANGE, and read-only scripts (EVAL_RO) that call every
// command Redis 7 lets them and some it refuses. Seeded random sequences run
// on both stores, the simulated one's clock set to when redis-server got each
// command (timeline); after each, the replies and every stream (entries,
// groups, pending entries with consumer and delivery count, consumers with
// their pending counts) must agree, idle times to within a round trip.
//
// The named loosenesses (streamLoosenesses' why, and docs/how-it-works.md):
// what they leave out is never compared here.
//   - XINFO STREAM: miniredis answers length and last-generated-id only.
//   - XINFO GROUPS: entries-read is nil and lag the stream's length.
//   - XINFO CONSUMERS: idle and inactive are not kept by every command.
//   - XTRIM and XADD with "~": both trim whole nodes only, but a simulated
//     node always holds 100 entries (stream-node-max-entries); Redis also
//     closes one at 4096 bytes (stream-node-max-bytes), so with entries
//     larger than about 40 bytes it trims more. TestStreamApproximateTrimming
//     compares small entries.
var streamLoosenesses = []string{"XINFO STREAM fields", "XINFO GROUPS entries-read and lag",
	"XINFO CONSUMERS idle and inactive", "node size in bytes"}

// streamIdle is the time an entry may sit idle in these sequences: far
// from any min-idle-time they use, so that a round trip's uncertainty never
// decides a claim.
const streamIdle = 250 * time.Millisecond

func TestSimulatedStreamsAgainstRedisServer(t *testing.T) {
	url := redisURL(t)
	seeds := longtest.Pick(4, 12)
	ops := longtest.Pick(150, 500)
	total := 0
	for seed := range uint64(seeds) {
		n, div := runStreamDiff(t, url, seed+1, ops)
		total += n
		if div != "" {
			t.Fatalf("seed %d, operation %d: the simulated store differs from redis-server\n%s", seed+1, n, div)
		}
	}
	t.Logf("%d seeds, %d stream operations, 0 divergences; loosenesses not compared: %s",
		seeds, total, strings.Join(streamLoosenesses, ", "))
}

// The comparison sees a simulated store that claims what it should not: a
// store that ignores XCLAIM's min-idle-time, as the fork did, diverges.
func TestStreamDifferentialSeesDivergences(t *testing.T) {
	url := redisURL(t)
	ctx := context.Background()
	clock := &timeline{}
	sim, _ := simulatedStoreClient(t, 1, clock)
	real := realStoreClient(t, url, clock)
	// min-idle-time 0 on the simulated side only: it claims at once.
	ignoreMinIdle := sabotageHook{before: func(cmd redis.Cmder) {
		if args := cmd.Args(); strings.EqualFold(fmt.Sprint(args[0]), "xclaim") {
			args[4] = "0"
		}
	}}
	sim.AddHook(ignoreMinIdle)
	setup := [][]any{
		{"xgroup", "create", "s", "g", "0", "mkstream"},
		{"xadd", "s", "1-1", "job", "j-1"},
		{"xreadgroup", "group", "g", "c1", "streams", "s", ">"},
		{"xclaim", "s", "g", "c2", "60000", "1-1"},
	}
	var div string
	for _, op := range setup {
		if div = compareStreamOp(ctx, clock, sim, real, op); div != "" {
			break
		}
	}
	if div == "" {
		t.Fatal("a store that ignores min-idle-time went unseen")
	}
	t.Logf("seen: %s", div)
}

// runStreamDiff runs ops random stream operations from seed on a fresh pair
// of stores; it returns how many ran and the first divergence.
func runStreamDiff(t *testing.T, url string, seed uint64, ops int) (int, string) {
	ctx := context.Background()
	clock := &timeline{}
	sim, _ := simulatedStoreClient(t, seed, clock)
	real := realStoreClient(t, url, clock)
	gen := &streamOpGen{rng: rand.New(rand.NewPCG(seed, 0x57ea4))}
	for _, op := range gen.setup() {
		if div := compareStreamOp(ctx, clock, sim, real, op); div != "" {
			return 0, div
		}
	}
	for i := range ops {
		op := gen.next()
		if op == nil {
			time.Sleep(streamIdle)
			continue
		}
		if div := compareStreamOp(ctx, clock, sim, real, op); div != "" {
			return i + 1, div
		}
	}
	return ops, ""
}

// compareStreamOp runs op on both stores and compares the replies and then
// the streams; it returns the difference, "" when none.
// Redis-server goes first, its reads included: the simulated store replays
// each command at the moment redis-server got it (timeline).
func compareStreamOp(ctx context.Context, clock *timeline, sim, real *redis.Client, op []any) string {
	clock.reset()
	realReply := renderReply(real.Do(ctx, op...).Result())
	realState, realIdle := streamState(ctx, real)
	simReply := renderReply(sim.Do(ctx, op...).Result())
	simState, simIdle := streamState(ctx, sim)
	name := strings.ToLower(fmt.Sprint(op[0]))
	if !sameStreamReply(name, op, simReply, realReply) {
		return fmt.Sprintf("after %v\n  reply, simulated: %s\n  reply, redis:     %s", op, simReply, realReply)
	}
	if simState != realState {
		return fmt.Sprintf("after %v\n  streams, simulated:\n%s  streams, redis:\n%s", op, simState, realState)
	}
	// Each store's idle time is as of its own read, each aligned to the
	// middle of redis-server's round trip: off by up to the slowest round
	// trip of this operation (a loaded machine stretches them).
	tolerance := streamIdle/5 + clock.slowest()
	for id, r := range realIdle {
		if d := simIdle[id] - r; d > tolerance || d < -tolerance {
			return fmt.Sprintf("after %v\n  pending %s idle %s simulated, %s redis (tolerance %s)", op, id, simIdle[id], r, tolerance)
		}
	}
	return ""
}

// sameStreamReply compares two replies; those that carry times compare by
// what a round trip cannot change.
func sameStreamReply(name string, op []any, sim, real string) bool {
	if name == "eval_ro" && strings.Contains(fmt.Sprint(op[1]), "TIME") {
		// the seconds of two clocks a round trip apart
		return len(sim) == len(real) && sim[:3] == real[:3]
	}
	if name == "xpending" && len(op) > 3 {
		return dropIdle(sim) == dropIdle(real)
	}
	return sim == real
}

// dropIdle blanks the idle times of an extended XPENDING reply: the third
// field of each entry ("[id consumer idle count]").
func dropIdle(reply string) string {
	parts := strings.Split(reply, "[")
	for i, p := range parts {
		f := strings.Fields(p)
		if len(f) == 4 {
			f[2] = "_"
			parts[i] = strings.Join(f, " ") + p[len(strings.TrimRight(p, " ")):]
		}
	}
	return strings.Join(parts, "[")
}

// renderReply writes a reply or its error in one line; a script error keeps
// only its message, without the script's SHA1 and line the two stores word
// apart.
func renderReply(v any, err error) string {
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "Write commands are not allowed from read-only scripts."); i >= 0 {
			return "error: Write commands are not allowed from read-only scripts."
		}
		return "error: " + msg
	}
	return fmt.Sprint(v)
}

// streamState renders every stream through ordinary commands, and returns
// the idle time of each pending entry apart (group/id).
func streamState(ctx context.Context, rdb *redis.Client) (string, map[string]time.Duration) {
	var b strings.Builder
	idle := map[string]time.Duration{}
	keys, _ := rdb.Keys(ctx, "*").Result()
	for _, key := range sorted(keys) {
		if typ, _ := rdb.Type(ctx, key).Result(); typ != "stream" {
			fmt.Fprintf(&b, "%s: %s\n", key, typ)
			continue
		}
		entries, err := rdb.Do(ctx, "xrange", key, "-", "+").Result()
		fmt.Fprintf(&b, "%s: %s\n", key, renderReply(entries, err))
		groups, err := rdb.XInfoGroups(ctx, key).Result()
		if err != nil {
			fmt.Fprintf(&b, "  groups: %v\n", err)
		}
		for _, g := range groups {
			fmt.Fprintf(&b, "  group %s last-delivered-id %s consumers %d pending %d\n", g.Name, g.LastDeliveredID, g.Consumers, g.Pending)
			pending, _ := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 1000}).Result()
			for _, p := range pending {
				fmt.Fprintf(&b, "    pending %s %s deliveries %d\n", p.ID, p.Consumer, p.RetryCount)
				idle[g.Name+"/"+p.ID] = p.Idle
			}
			consumers, _ := rdb.XInfoConsumers(ctx, key, g.Name).Result()
			for _, c := range consumers {
				fmt.Fprintf(&b, "    consumer %s pending %d\n", c.Name, c.Pending)
			}
		}
	}
	return b.String(), idle
}

// streamOpGen draws stream operations on one stream, two groups and three
// consumers; nil is a pause of streamIdle.
type streamOpGen struct {
	rng  *rand.Rand
	ms   int // the next entry's millisecond part
	seen []string
}

func (g *streamOpGen) setup() [][]any {
	return [][]any{
		{"xgroup", "create", "jobs", "workers", "$", "mkstream"},
		{"xgroup", "create", "jobs", "audit", "0"},
	}
}

func (g *streamOpGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

// id is an entry ID seen so far (or one never added, now and then).
func (g *streamOpGen) id() string {
	if len(g.seen) == 0 || g.rng.IntN(10) == 0 {
		return strconv.Itoa(g.rng.IntN(g.ms+2)) + "-1"
	}
	return g.seen[g.rng.IntN(len(g.seen))]
}

func (g *streamOpGen) ids() []any {
	out := []any{g.id()}
	for g.rng.IntN(3) == 0 {
		out = append(out, g.id())
	}
	return out
}

func (g *streamOpGen) minIdle() string {
	return g.pick("0", strconv.Itoa(int(streamIdle.Milliseconds()/2)), "60000")
}

func (g *streamOpGen) next() []any {
	group, consumer := g.pick("workers", "audit"), g.pick("c1", "c2", "c3")
	switch r := g.rng.IntN(100); {
	case r < 6:
		return nil
	case r < 22:
		g.ms += 1 + g.rng.IntN(3)
		id := strconv.Itoa(g.ms) + "-1"
		op := []any{"xadd", "jobs"}
		if g.rng.IntN(8) == 0 {
			op = append(op, "maxlen", g.pick("=", "~"), 6)
		}
		if g.rng.IntN(4) == 0 {
			id = strconv.Itoa(g.ms) + "-*" // allocates ms-0
			g.seen = append(g.seen, strconv.Itoa(g.ms)+"-0")
		} else {
			g.seen = append(g.seen, id)
		}
		return append(op, id, "job", "j-"+strconv.Itoa(g.ms), "try", "1")
	case r < 34:
		op := []any{"xreadgroup", "group", group, consumer}
		if g.rng.IntN(2) == 0 {
			op = append(op, "count", 1+g.rng.IntN(3))
		}
		return append(op, "streams", "jobs", g.pick(">", ">", ">", "0"))
	case r < 42:
		return append([]any{"xack", "jobs", group}, g.ids()...)
	case r < 56:
		op := append([]any{"xclaim", "jobs", group, consumer, g.minIdle()}, g.ids()...)
		for _, opt := range [][]any{{"idle", 1000}, {"retrycount", 5}, {"force"}, {"justid"}} {
			if g.rng.IntN(4) == 0 {
				op = append(op, opt...)
			}
		}
		return op
	case r < 66:
		op := []any{"xautoclaim", "jobs", group, consumer, g.minIdle(), g.pick("0", "0-0", "-", g.id())}
		if g.rng.IntN(2) == 0 {
			op = append(op, "count", 1+g.rng.IntN(3))
		}
		if g.rng.IntN(3) == 0 {
			op = append(op, "justid")
		}
		return op
	case r < 74:
		switch g.rng.IntN(3) {
		case 0:
			return []any{"xpending", "jobs", group}
		case 1:
			return []any{"xpending", "jobs", group, "idle", g.minIdle(), "-", "+", 10}
		}
		return []any{"xpending", "jobs", group, "-", "+", 1 + g.rng.IntN(5), consumer}
	case r < 79:
		return append([]any{"xdel", "jobs"}, g.ids()...)
	case r < 82:
		if g.rng.IntN(2) == 0 {
			return []any{"xtrim", "jobs", "maxlen", g.pick("=", "~"), 4 + g.rng.IntN(4)}
		}
		return []any{"xtrim", "jobs", "minid", g.pick("=", "~"), g.id()}
	case r < 85:
		return [][]any{{"xlen", "jobs"}, {"xrange", "jobs", "-", "+"}, {"xrevrange", "jobs", "+", "-", "count", 2}}[g.rng.IntN(3)]
	case r < 87:
		return []any{"xgroup", g.pick("createconsumer", "delconsumer"), "jobs", group, consumer}
	case r < 94:
		return []any{"eval_ro", g.pick(readOnlyCalls...), 1, "jobs"}
	default:
		return []any{"eval_ro", g.pick(refusedCalls...), 1, "jobs"}
	}
}

// readOnlyCalls are commands without Redis's write flag, which a read-only
// script may call.
var readOnlyCalls = []string{
	"return redis.call('TIME')",
	"return redis.call('XLEN', KEYS[1])",
	"return redis.call('XRANGE', KEYS[1], '-', '+')",
	"return redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 2)",
	"return #redis.call('XPENDING', KEYS[1], 'workers', '-', '+', 10)",
	"return redis.call('XPENDING', KEYS[1], 'workers')",
	"return redis.call('XINFO', 'STREAM', KEYS[1])['length']",
	"return redis.call('EXISTS', KEYS[1])",
	"return redis.call('TYPE', KEYS[1])",
	"return {redis.call('TTL', KEYS[1]), redis.call('PTTL', KEYS[1])}",
	"return {redis.call('GET', 'k'), redis.call('HGET', 'h', 'f'), redis.call('HGETALL', 'h')}",
	"return {redis.call('SCARD', 's'), redis.call('SISMEMBER', 's', 'm'), redis.call('SMEMBERS', 's')}",
	"return {redis.call('LRANGE', 'l', 0, -1), redis.call('LLEN', 'l')}",
	"return {redis.call('ZRANGE', 'z', 0, -1), redis.call('ZRANGEBYSCORE', 'z', '-inf', '+inf'), redis.call('ZCARD', 'z')}",
	"return {redis.call('PING'), redis.call('ECHO', 'x'), redis.call('DBSIZE')}",
}

// refusedCalls write, or may replicate: a read-only script may not call them.
var refusedCalls = []string{
	"return redis.call('XADD', KEYS[1], '*', 'f', 'v')",
	"return redis.call('XACK', KEYS[1], 'workers', '1-1')",
	"return redis.call('XCLAIM', KEYS[1], 'workers', 'c1', 0, '1-1')",
	"return redis.call('XREADGROUP', 'GROUP', 'workers', 'c1', 'STREAMS', KEYS[1], '>')",
	"return redis.call('SET', 'k', 'v')",
	"return redis.call('DEL', KEYS[1])",
	"return redis.call('PFCOUNT', 'hll')",
	"return redis.call('PUBLISH', 'ch', 'x')",
}

// The cases the Redis Streams dispatcher's team ran into, each with the
// reply both stores must give: XCLAIM of an entry idle less than its
// min-idle-time claims nothing and leaves it with its consumer; XCLAIM
// JUSTID claims without counting a delivery (and resets the idle time);
// XAUTOCLAIM lists an entry deleted from the stream in its third element and
// drops it from the pending list; TIME runs in a read-only script. On the
// simulated store always; on redis-server too when REDIS_URL is set.
func TestStreamClaimCases(t *testing.T) {
	type step struct {
		call []any
		want string // the reply as renderReply writes it; "" not checked
	}
	steps := []step{
		{[]any{"xgroup", "create", "jobs", "workers", "0", "mkstream"}, "OK"},
		{[]any{"xadd", "jobs", "1-1", "job", "j-1"}, "1-1"},
		{[]any{"xadd", "jobs", "2-1", "job", "j-2"}, "2-1"},
		{[]any{"xreadgroup", "group", "workers", "c1", "streams", "jobs", ">"}, ""},
		{nil, ""}, // both entries idle streamIdle now
		{[]any{"xclaim", "jobs", "workers", "c2", 60000, "1-1"}, "[]"},
		{[]any{"xpending", "jobs", "workers", "-", "+", 1}, "[[1-1 c1 _ 1]]"},
		{[]any{"xclaim", "jobs", "workers", "c2", streamIdle.Milliseconds() / 2, "1-1", "justid"}, "[1-1]"},
		{[]any{"xpending", "jobs", "workers", "-", "+", 1}, "[[1-1 c2 _ 1]]"},
		{[]any{"xpending", "jobs", "workers", "idle", streamIdle.Milliseconds() / 2, "-", "+", 10}, "[[2-1 c1 _ 1]]"},
		{[]any{"xclaim", "jobs", "workers", "c2", 0, "1-1"}, "[[1-1 [job j-1]]]"},
		{[]any{"xpending", "jobs", "workers", "-", "+", 1}, "[[1-1 c2 _ 2]]"},
		{[]any{"xdel", "jobs", "2-1"}, "1"},
		{[]any{"xautoclaim", "jobs", "workers", "c3", 0, "0", "count", 1}, "[2-1 [[1-1 [job j-1]]] []]"},
		{[]any{"xautoclaim", "jobs", "workers", "c3", 0, "2-1"}, "[0-0 [] [2-1]]"},
		{[]any{"xpending", "jobs", "workers"}, "[1 1-1 1-1 [[c3 1]]]"},
		{[]any{"eval_ro", "return #redis.call('TIME')", 0}, "2"},
		{[]any{"eval_ro", "return redis.call('XPENDING', KEYS[1], 'workers')[1]", 1, "jobs"}, "1"},
		{[]any{"eval_ro", "return redis.call('XACK', KEYS[1], 'workers', '1-1')", 1, "jobs"},
			"error: Write commands are not allowed from read-only scripts."},
	}
	run := func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		for _, s := range steps {
			if s.call == nil {
				time.Sleep(streamIdle)
				continue
			}
			got := renderReply(rdb.Do(ctx, s.call...).Result())
			if strings.EqualFold(fmt.Sprint(s.call[0]), "xpending") && len(s.call) > 3 {
				got = dropIdle(got)
			}
			if s.want != "" && got != s.want {
				t.Errorf("%v: %s, want %s", s.call, got, s.want)
			}
		}
	}
	t.Run("simulated", func(t *testing.T) {
		mr := store.NewMiniredis(1)
		if err := mr.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(mr.Close)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2, MaxRetries: -1, DisableIdentity: true})
		t.Cleanup(func() { _ = rdb.Close() })
		// the simulated store's clock is the wall clock here, as redis-server's
		rdb.AddHook(timelineHook{func(string) func() { mr.SetTime(time.Now()); return func() {} }})
		run(t, rdb)
	})
	if os.Getenv("REDIS_URL") == "" && os.Getenv("CI") != "true" {
		return
	}
	t.Run("redis", func(t *testing.T) { run(t, realStoreClient(t, redisURL(t), &timeline{})) })
}

// Trimming with "~" removes whole nodes of 100 entries and never part of
// one, on both stores: entries added one by one with and without MAXLEN ~,
// some deleted in between, trimmed by MAXLEN and MINID with and without
// LIMIT.
func TestStreamApproximateTrimming(t *testing.T) {
	url := redisURL(t)
	ctx := context.Background()
	clock := &timeline{}
	sim, _ := simulatedStoreClient(t, 1, clock)
	real := realStoreClient(t, url, clock)
	var ops [][]any
	for i := 1; i <= 230; i++ {
		op := []any{"xadd", "jobs"}
		if i > 150 && i%7 == 0 {
			op = append(op, "maxlen", "~", 40)
		}
		ops = append(ops, append(op, fmt.Sprintf("%d-1", i), "job", fmt.Sprintf("j-%d", i)))
		if i%9 == 0 {
			ops = append(ops, []any{"xdel", "jobs", fmt.Sprintf("%d-1", i-3)})
		}
	}
	ops = append(ops,
		[]any{"xtrim", "jobs", "maxlen", "~", 20, "limit", 50},
		[]any{"xtrim", "jobs", "minid", "~", "200-1"},
		[]any{"xtrim", "jobs", "maxlen", "=", 75},
		[]any{"xtrim", "jobs", "maxlen", "~", 20},
		[]any{"xtrim", "jobs", "minid", "~", "300-1"},
	)
	for i, op := range ops {
		if div := compareStreamOp(ctx, clock, sim, real, op); div != "" {
			t.Fatalf("operation %d: the simulated store differs from redis-server\n%s", i+1, div)
		}
	}
}
