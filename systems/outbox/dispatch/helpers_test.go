package dispatch

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// manualClock is a single-threaded test clock: Advance moves time and runs
// every timer that falls due, in time order, on the calling goroutine.
type manualClock struct {
	mu        sync.Mutex
	now       time.Time
	timers    []*manualTimer
	seq       int
	onAdvance func(time.Duration)
}

type manualTimer struct {
	clock   *manualClock
	at      time.Time
	seq     int
	f       func(context.Context)
	stopped bool
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return ctx.Err()
}

func (c *manualClock) AfterFunc(d time.Duration, f func(context.Context)) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	tm := &manualTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, tm)
	return tm
}

func (tm *manualTimer) Stop() bool {
	tm.clock.mu.Lock()
	defer tm.clock.mu.Unlock()
	was := !tm.stopped
	tm.stopped = true
	return was
}

// Advance moves time forward by d, firing due timers in time order.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.Slice(c.timers, func(i, j int) bool {
			if !c.timers[i].at.Equal(c.timers[j].at) {
				return c.timers[i].at.Before(c.timers[j].at)
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		var next *manualTimer
		for len(c.timers) > 0 {
			tm := c.timers[0]
			c.timers = c.timers[1:]
			if tm.stopped {
				continue
			}
			if tm.at.After(target) {
				c.timers = append([]*manualTimer{tm}, c.timers...)
				break
			}
			tm.stopped = true
			next = tm
			break
		}
		if next == nil {
			step := target.Sub(c.now)
			c.now = target
			c.mu.Unlock()
			c.forward(step)
			return
		}
		step := next.at.Sub(c.now)
		c.now = next.at
		c.mu.Unlock()
		c.forward(step)
		next.f(context.Background())
	}
}

func (c *manualClock) forward(d time.Duration) {
	if c.onAdvance != nil && d > 0 {
		c.onAdvance(d)
	}
}

// fakeBus records publishes; fail makes the next publishes to a subject
// prefix fail; onPublish runs inside a publish (to stage a race).
type fakeBus struct {
	mu        sync.Mutex
	published []published
	fail      map[string]int
	onPublish func(subject string, msg Message)
}

type published struct {
	Subject string
	Msg     Message
}

func (b *fakeBus) Publish(_ context.Context, subject string, msg Message) error {
	if b.onPublish != nil {
		b.onPublish(subject, msg)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for prefix, n := range b.fail {
		if n > 0 && strings.HasPrefix(subject, prefix) {
			b.fail[prefix] = n - 1
			return fmt.Errorf("publish %s: broker unavailable", subject)
		}
	}
	b.published = append(b.published, published{subject, msg})
	return nil
}

func (b *fakeBus) failNext(prefix string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail == nil {
		b.fail = map[string]int{}
	}
	b.fail[prefix] = n
}

// to returns the messages published to subjects starting with prefix.
func (b *fakeBus) to(prefix string) []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Message
	for _, p := range b.published {
		if strings.HasPrefix(p.Subject, prefix) {
			out = append(out, p.Msg)
		}
	}
	return out
}

// faultHook fails the chosen script's next runs, before it is sent (not
// applied) or after it ran (applied, reply lost).
type faultHook struct {
	mu        sync.Mutex
	script    *redis.Script
	afterSend bool
	left      int
}

var errInjected = errors.New("injected redis fault")

func (h *faultHook) failScript(s *redis.Script, afterSend bool, times int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script, h.afterSend, h.left = s, afterSend, times
}

// matches reports whether args run h's script, by EVALSHA or by EVAL (go-redis
// falls back to EVAL on a fresh server).
func (h *faultHook) matches(args []any) bool {
	if h.script == nil || len(args) < 2 {
		return false
	}
	switch strings.ToLower(fmt.Sprint(args[0])) {
	case "evalsha":
		return fmt.Sprint(args[1]) == h.script.Hash()
	case "eval":
		sum := sha1.Sum([]byte(fmt.Sprint(args[1])))
		return hex.EncodeToString(sum[:]) == h.script.Hash()
	}
	return false
}

func (h *faultHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *faultHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		hit, afterSend := h.left != 0 && h.matches(cmd.Args()), h.afterSend
		h.mu.Unlock()
		if !hit {
			return next(ctx, cmd)
		}
		if afterSend {
			if err := next(ctx, cmd); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				return err // not run yet: go-redis retries with EVAL, which the rule takes
			}
		}
		h.mu.Lock()
		h.left--
		h.mu.Unlock()
		cmd.SetErr(errInjected)
		return errInjected
	}
}

func (h *faultHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// seqRandom is a seeded Random.
type seqRandom struct{ r *rand.Rand }

func (s *seqRandom) Uint64() uint64 { return s.r.Uint64() }

// testEnv is one miniredis store with a clock, a bus and a fault hook shared
// by every replica built on it.
type testEnv struct {
	mr    *miniredis.Miniredis
	rdb   *redis.Client
	clock *manualClock
	bus   *fakeBus
	hook  *faultHook
	seed  uint64
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	hook := &faultHook{}
	rdb.AddHook(hook)
	clock := newManualClock()
	// The store's clock is the test's: TIME (which the scripts stamp with and
	// the sweeps and relays judge by) reads it, and keys expire by it.
	mr.SetTime(clock.Now())
	clock.onAdvance = func(d time.Duration) {
		mr.FastForward(d)
		mr.SetTime(clock.Now())
	}
	return &testEnv{mr: mr, rdb: rdb, clock: clock, bus: &fakeBus{}, hook: hook}
}

// testReplica is a dispatcher on env with its own registry.
type testReplica struct {
	*Dispatcher
	env *testEnv
	reg *prometheus.Registry
}

func (env *testEnv) replica(t *testing.T, opts ...func(*Config)) *testReplica {
	t.Helper()
	env.seed++
	reg := prometheus.NewRegistry()
	cfg := Config{Redis: env.rdb, Bus: env.bus, Clock: env.clock, Random: &seqRandom{rand.New(rand.NewPCG(env.seed, 7))},
		Registerer: reg, Routing: Routing{Topics: map[string][]string{"default": {"cpu"}}}}
	for _, o := range opts {
		o(&cfg)
	}
	d, err := New(cfg)
	require.NoError(t, err)
	r := &testReplica{Dispatcher: d, env: env, reg: reg}
	r.heartbeat(t)
	return r
}

// heartbeat reports worker w1 (pool cpu) alive and idle.
func (r *testReplica) heartbeat(t *testing.T) {
	t.Helper()
	require.NoError(t, r.HandleHeartbeat(ctx, Heartbeat{WorkerID: "w1", Pool: "cpu", MaxParallel: 100}))
}

func (r *testReplica) job(t *testing.T, id string) *Job {
	t.Helper()
	j, err := r.store.Get(ctx, id)
	require.NoError(t, err)
	return j
}

func (r *testReplica) state(t *testing.T, id string) JobState {
	t.Helper()
	return r.job(t, id).State
}

func (r *testReplica) pending(t *testing.T) int64 {
	t.Helper()
	n, err := r.store.PendingEntries(ctx)
	require.NoError(t, err)
	return n
}

// submit runs a job request that must settle (ack).
func (r *testReplica) submit(t *testing.T, id string) {
	t.Helper()
	require.NoError(t, r.HandleJobRequest(ctx, JobRequest{JobID: id, Topic: "default", Payload: []byte("p-" + id)}))
}

// relay runs one relay tick and returns how many entries the bus accepted.
func (r *testReplica) relay(t *testing.T) int {
	t.Helper()
	n, _ := r.RelayOnce(ctx)
	return n
}

func (r *testReplica) counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		total := 0.0
		for _, m := range mf.GetMetric() {
			match := true
			for i, lp := range m.GetLabel() {
				if i < len(labels) && lp.GetValue() != labels[i] {
					match = false
				}
			}
			if match {
				total += m.GetCounter().GetValue()
			}
		}
		return total
	}
	return 0
}

func packetOf(t *testing.T, msg Message) JobPacket {
	t.Helper()
	var p JobPacket
	require.NoError(t, json.Unmarshal(msg.Data, &p))
	return p
}
