package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// fakeBus records publishes; failNext makes the next publishes to a subject fail.
type fakeBus struct {
	mu        sync.Mutex
	published []published
	fail      map[string]int // subject prefix -> failures left
	stored    bool           // failures still store the message (ambiguous publish)
}

type published struct {
	Subject string
	Msg     Message
}

func (b *fakeBus) Publish(_ context.Context, subject string, msg Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for prefix, n := range b.fail {
		if n > 0 && strings.HasPrefix(subject, prefix) {
			b.fail[prefix] = n - 1
			if b.stored {
				b.published = append(b.published, published{subject, msg})
			}
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

// count returns how many messages went to subjects starting with prefix.
func (b *fakeBus) count(prefix string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, p := range b.published {
		if strings.HasPrefix(p.Subject, prefix) {
			n++
		}
	}
	return n
}

// faultHook fails chosen Redis commands, before they are sent (not applied) or
// after they ran (applied, reply lost).
type faultHook struct {
	mu    sync.Mutex
	rules []*faultRule
}

type faultRule struct {
	match     func(args []any) bool
	afterSend bool
	left      int // failures left; <0 forever
}

var errInjected = errors.New("injected redis fault")

func (h *faultHook) add(match func(args []any) bool, afterSend bool, times int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules = append(h.rules, &faultRule{match: match, afterSend: afterSend, left: times})
}

func (h *faultHook) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules = nil
}

// take returns the first live rule matching args. Matchers run outside the mutex:
// a matcher may itself drive the engine (to stage a race), which reenters here.
func (h *faultHook) take(args []any) *faultRule {
	h.mu.Lock()
	rules := append([]*faultRule(nil), h.rules...)
	h.mu.Unlock()
	for _, r := range rules {
		if !r.match(args) {
			continue
		}
		h.mu.Lock()
		live := r.left != 0
		if r.left > 0 {
			r.left--
		}
		h.mu.Unlock()
		if live {
			return r
		}
	}
	return nil
}

func (h *faultHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *faultHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r := h.take(cmd.Args())
		if r == nil {
			return next(ctx, cmd)
		}
		if r.afterSend {
			_ = next(ctx, cmd)
		}
		cmd.SetErr(errInjected)
		return errInjected
	}
}

func (h *faultHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// transitionTo matches the transition script moving a job to state.
func transitionTo(state JobState) func([]any) bool {
	return func(args []any) bool {
		return isScript(args, transitionScript) && len(args) > 10 && fmt.Sprint(args[10]) == string(state)
	}
}

// isScript matches EVALSHA/EVAL of s.
func isScript(args []any, s *redis.Script) bool {
	if len(args) < 2 {
		return false
	}
	switch strings.ToLower(fmt.Sprint(args[0])) {
	case "evalsha":
		return fmt.Sprint(args[1]) == s.Hash()
	}
	return false
}

// commandIs matches a plain command by name and first key.
func commandIs(name, key string) func([]any) bool {
	return func(args []any) bool {
		return len(args) > 1 && strings.EqualFold(fmt.Sprint(args[0]), name) && fmt.Sprint(args[1]) == key
	}
}

type testEngine struct {
	*Engine
	env  *testEnv
	bus  *fakeBus
	hook *faultHook
	reg  *prometheus.Registry
}

var defaultTestRouting = Routing{
	Topics: map[string][]string{"default": {"general"}, "gpu": {"gpu-pool"}},
	Pools: map[string]Pool{
		"general":  {},
		"gpu-pool": {Requires: []string{"GPU"}},
	},
}

func newTestEngine(t *testing.T, env *testEnv, mutate ...func(*Config)) *testEngine {
	t.Helper()
	hook := &faultHook{}
	env.rdb.AddHook(hook)
	bus := &fakeBus{}
	reg := prometheus.NewRegistry()
	cfg := Config{Redis: env.rdb, Bus: bus, Clock: env.clock, Random: env.rand, Registerer: reg,
		Routing: defaultTestRouting}
	for _, m := range mutate {
		m(&cfg)
	}
	e, err := New(cfg)
	require.NoError(t, err)
	te := &testEngine{Engine: e, env: env, bus: bus, hook: hook, reg: reg}
	te.heartbeat("w1", "general", 0)
	te.heartbeat("g1", "gpu-pool", 0)
	return te
}

func (te *testEngine) heartbeat(worker, pool string, active int) {
	_ = te.HandleHeartbeat(context.Background(), Heartbeat{WorkerID: worker, Pool: pool, Active: active, MaxParallel: 10})
}

func (te *testEngine) state(t *testing.T, id string) JobState {
	t.Helper()
	st, err := te.store.GetState(context.Background(), id)
	require.NoError(t, err)
	return st
}

func (te *testEngine) job(t *testing.T, id string) *Job {
	t.Helper()
	j, err := te.store.Get(context.Background(), id)
	require.NoError(t, err)
	return j
}

// putJob writes a job directly in state st (a fixture, bypassing the handlers).
func (te *testEngine) putJob(t *testing.T, id string, st JobState) {
	t.Helper()
	ctx := context.Background()
	at, err := te.store.Now(ctx) // stamped as the job store stamps: on the store's clock
	require.NoError(t, err)
	now := at.UnixMilli()
	require.NoError(t, te.env.rdb.HSet(ctx, jobKey(id), "id", id, "state", string(st), "topic", "default",
		"version", 1, "attempts", 1, "dispatch_gen", 0, "created_at", now, "updated_at", now).Err())
	require.NoError(t, te.env.rdb.ZAdd(ctx, jobIndexKey(st), redis.Z{Score: float64(now), Member: id}).Err())
}

func (te *testEngine) counter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

func req(id string) JobRequest { return JobRequest{JobID: id, Topic: "default"} }
