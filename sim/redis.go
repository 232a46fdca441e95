package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// ErrInjected is the error a store command returns when a fault fires.
var ErrInjected = errors.New("sim: injected store fault")

// store is the simulated Redis: one miniredis shared by every group, each group
// with its own go-redis client whose hook is both the yield point and the fault
// point, and which records what the store applied.
type store struct {
	w       *World
	mr      *miniredis.Miniredis
	clients []*redis.Client
	states  map[string]observed
	scripts map[string]string // sha -> name, for the trace
	// lockKeys maps a job to its lock's key, once a command named it.
	lockKeys map[string]string
}

func newStore(w *World, seed uint64) *store {
	mr := miniredis.NewMiniRedis()
	mr.Seed(int(seed & 0x7fffffff))
	mr.SetTime(kernel.Epoch)
	mr.ClockTTL(true)
	// One Lua VM for every script instead of one per EVALSHA (patched
	// miniredis, third_party/): read-only globals keep scripts apart.
	mr.ReuseLua(true)
	w.k.OnAdvance(mr.SetTime)
	return &store{w: w, mr: mr, states: map[string]observed{}, scripts: map[string]string{},
		lockKeys: map[string]string{}}
}

// observed is the last committed state and version seen for a job.
type observed struct {
	state   string
	version int64
}

// client returns a new go-redis client for group, configured so that nothing
// in it runs on wall time or retries on its own (DESIGN.md §3).
func (s *store) client(group string) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:             "miniredis",
		Dialer:           func(context.Context, string, string) (net.Conn, error) { return s.dial() },
		Protocol:         2,
		DisableIdentity:  true,
		MaxRetries:       -1,
		DialerRetries:    1,
		ReadTimeout:      -2,
		WriteTimeout:     -2,
		ConnMaxIdleTime:  -1,
		PipelinePoolSize: -1,
		MinIdleConns:     0,
		PoolSize:         256,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	})
	c.AddHook(&storeHook{s: s, group: group})
	s.clients = append(s.clients, c)
	return c
}

// dial connects to miniredis over a memConn once its server runs (the first
// miniredis.Dial starts it).
func (s *store) dial() (net.Conn, error) {
	srv := s.mr.Server()
	if srv == nil {
		return s.mr.Dial()
	}
	client, server := newMemConn()
	srv.ServeConn(server)
	return client, nil
}

// The store is the observers' sut.View: reads straight from miniredis, no
// client, no yield, no fault.
var _ sut.View = (*store)(nil)

// Keys lists every key, sorted.
func (s *store) Keys() []string {
	keys := s.mr.Keys()
	sort.Strings(keys)
	return keys
}

// Get reads a string key.
func (s *store) Get(key string) (string, bool) {
	v, err := s.mr.Get(key)
	return v, err == nil
}

// Members reads a set.
func (s *store) Members(key string) []string {
	m, _ := s.mr.Members(key)
	return m
}

// ZScores reads a sorted set.
func (s *store) ZScores(key string) map[string]float64 {
	members, _ := s.mr.ZMembers(key)
	out := make(map[string]float64, len(members))
	for _, m := range members {
		out[m], _ = s.mr.ZScore(key, m)
	}
	return out
}

// Field reads one hash field.
func (s *store) Field(key, field string) string { return s.mr.HGet(key, field) }

// TTL is a key's remaining time to live.
func (s *store) TTL(key string) time.Duration { return s.mr.TTL(key) }

// Hash reads a whole hash; ok is false when key holds no hash.
func (s *store) Hash(key string) (map[string]string, bool) {
	fields, err := s.mr.HKeys(key)
	if err != nil {
		return nil, false
	}
	h := make(map[string]string, len(fields))
	for _, f := range fields {
		h[f] = s.mr.HGet(key, f)
	}
	return h, true
}

func (s *store) close() {
	for _, c := range s.clients {
		_ = c.Close()
	}
	s.mr.Close()
}

// readOnly commands never change data; everything else (scripts included) may.
var readOnly = map[string]bool{
	"get": true, "mget": true, "hget": true, "hgetall": true, "hmget": true, "exists": true,
	"scard": true, "smembers": true, "sismember": true, "zrange": true, "zrangebyscore": true,
	"zscore": true, "zcard": true, "lrange": true, "llen": true, "ttl": true, "pttl": true,
	"type": true, "strlen": true, "scan": true, "keys": true, "ping": true,
}

// handshake commands run while go-redis opens a connection, on the calling
// actor's goroutine: traced, never a yield or fault point.
var handshake = map[string]bool{"hello": true, "auth": true, "select": true, "client": true}

type storeHook struct {
	s     *store
	group string
}

func (h *storeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *storeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		k := h.s.w.k
		a := k.Current(ctx, "redis pipeline")
		sent := k.Now()
		a.Yield()
		err := next(ctx, cmds)
		k.Tracef(a.Name(), "redis pipeline n=%d err=%v", len(cmds), err)
		for _, c := range cmds {
			h.observe(a, c, sent)
		}
		return err
	}
}

func (h *storeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	process := h.process(next)
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := process(ctx, cmd)
		h.countFailedJobRead(ctx, cmd, err)
		return err
	}
}

// countFailedJobRead keeps the ground truth a fail-closed decision can follow:
// a replica's read of a job that returned an error, whatever the cause (an
// injected fault, a context cancelled by fencing, a crash).
func (h *storeHook) countFailedJobRead(ctx context.Context, cmd redis.Cmder, err error) {
	name := strings.ToLower(cmd.Name())
	if err == nil || errors.Is(err, redis.Nil) || handshake[name] || !readOnly[name] {
		return
	}
	a := kernel.ActorOf(ctx)
	if a == nil || !strings.HasPrefix(a.Group().Name, "replica-") {
		return
	}
	w := h.s.w
	if _, ok := w.obs.JobKey(firstKey(name, cmd.Args())); ok {
		w.hist.Redis.FailedJobReads++
	}
}

// process is the hook proper: a yield point, a fault point, and the observer
// of what each command committed.
func (h *storeHook) process(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		w := h.s.w
		k := w.k
		name := strings.ToLower(cmd.Name())
		if handshake[name] {
			err := next(ctx, cmd)
			k.Tracef(actorName(ctx), "redis handshake %s err=%v", name, err)
			return err
		}
		a := k.HoldsBaton(ctx)
		if a == nil {
			a = k.Current(ctx, "redis "+name)
		}
		if a.Exiting() {
			cmd.SetErr(kernel.ErrActorDead)
			return kernel.ErrActorDead
		}
		sent := k.Now()
		a.Yield()

		args := cmd.Args()
		var p *Point
		var f Fault
		var fired bool
		var target string // only a fault needs it as a string
		if w.faultsArmed() {
			p = &Point{Kind: PointRedis, Actor: a.Name(), Group: a.Group().Name, Cmd: name, Args: args,
				Write: !readOnly[name], Key: firstKey(name, args), Fact: w.obs.Command(name, args)}
			if f, fired = w.fault(p); fired {
				target = h.describe(name, args)
			}
		}
		w.hist.Redis.Commands++
		if name == "evalsha" || name == "eval" {
			w.hist.Redis.Scripts++
		}
		if fired {
			w.hist.Redis.Faulted++
			w.recordFault(a, p, f, target)
			switch f.Effect {
			case EffectFailBeforeApply:
				cmd.SetErr(ErrInjected)
				k.Tracef(a.Name(), "redis %s -> injected error, not applied", target)
				return ErrInjected
			case EffectCrash:
				w.crash(a)
				a.ExitIfDead()
			case EffectPause:
				k.PauseGroup(a.Group().Name, k.Now()+f.Duration)
				a.Yield()
			case EffectDelay:
				a.SleepUntil(k.Now() + f.Duration)
			}
		}

		err := next(ctx, cmd)
		line := append(k.TraceStart(a.Name()), "redis "...)
		line = appendTarget(line, name, args)
		line = append(line, " -> "...)
		k.TraceEnd(appendReply(line, err))
		h.observe(a, cmd, sent)
		if fired {
			switch f.Effect {
			case EffectReplyLostAfterApply:
				cmd.SetErr(ErrInjected)
				k.Tracef(a.Name(), "redis reply lost")
				return ErrInjected
			case EffectCrashAfterApply:
				w.crash(a)
				a.ExitIfDead()
			}
		}
		return err
	}
}

// observe records every transition the command committed (a new version, even
// to the same state), read straight from
// miniredis (no client, no yield).
func (h *storeHook) observe(a *kernel.Actor, cmd redis.Cmder, sent time.Duration) {
	name := strings.ToLower(cmd.Name())
	if readOnly[name] || cmd.Err() != nil && !errors.Is(cmd.Err(), redis.Nil) {
		return
	}
	w := h.s.w
	fact := w.obs.Command(name, cmd.Args())
	if fact.LockKey != "" {
		h.observeLock(a, fact)
		return
	}
	for _, key := range w.obs.Touched(h.s, name, cmd.Args()) {
		id, _ := w.obs.JobKey(key)
		job := w.obs.Job(h.s, key)
		st, v := job.State, job.Version
		prev := h.s.states[id]
		if st == prev.state && v == prev.version {
			continue
		}
		h.s.states[id] = observed{state: st, version: v}
		w.hist.States = append(w.hist.States, StateChange{Step: w.k.Step(), Time: w.k.Now(), Actor: a.Name(),
			JobID: id, From: prev.state, To: st, Version: v, Sent: sent, Token: fact.Token, Holder: h.lockHolder(id)})
		w.k.Tracef(a.Name(), "state %s %s -> %s v%d", id, history.StateOrNone(prev.state), st, v)
		w.onState(id, st)
	}
}

// observeLock records who holds a job's lock after a command on it.
func (h *storeHook) observeLock(a *kernel.Actor, fact sut.CommandFact) {
	w := h.s.w
	holder, _ := h.s.Get(fact.LockKey)
	ev := LockEvent{Step: w.k.Step(), Time: w.k.Now(), Actor: a.Name(), JobID: fact.JobID, Token: fact.Token,
		Held: holder == fact.Token}
	if ev.Held {
		ev.Until = w.k.Now() + h.s.TTL(fact.LockKey)
	}
	w.hist.Locks = append(w.hist.Locks, ev)
	h.s.lockKeys[fact.JobID] = fact.LockKey
}

// lockHolder is the token holding a job's lock now, "" when none does.
func (h *storeHook) lockHolder(job string) string {
	key, ok := h.s.lockKeys[job]
	if !ok {
		return ""
	}
	tok, _ := h.s.Get(key)
	return tok
}

// firstKey returns the first key a command names.
func firstKey(name string, args []any) string {
	i := 1
	if name == "evalsha" || name == "eval" {
		i = 3
	}
	if len(args) > i {
		if s, ok := args[i].(string); ok {
			return s
		}
	}
	return ""
}

func (h *storeHook) describe(name string, args []any) string {
	if name == "evalsha" && len(args) > 1 {
		return fmt.Sprintf("evalsha %s %s", shortSHA(fmt.Sprint(args[1])), firstKey(name, args))
	}
	if name == "eval" {
		return "eval " + firstKey(name, args)
	}
	return strings.TrimSpace(name + " " + firstKey(name, args))
}

// appendTarget appends describe(name, args) without building a string.
func appendTarget(b []byte, name string, args []any) []byte {
	key := firstKey(name, args)
	switch {
	case name == "evalsha" && len(args) > 1:
		sha, ok := args[1].(string)
		if !ok {
			sha = fmt.Sprint(args[1])
		}
		b = append(b, "evalsha "...)
		b = append(b, shortSHA(sha)...)
		b = append(b, ' ')
		return append(b, key...)
	case name == "eval":
		return append(append(b, "eval "...), key...)
	case key == "":
		return append(b, strings.TrimSpace(name)...)
	case mayBeSpace(name[0]) || mayBeSpace(key[len(key)-1]):
		return append(b, strings.TrimSpace(name+" "+key)...)
	}
	b = append(b, name...)
	b = append(b, ' ')
	return append(b, key...)
}

// mayBeSpace is true for ASCII space and control bytes and for any byte of a
// multi-byte character: where strings.TrimSpace might trim.
func mayBeSpace(c byte) bool { return c <= ' ' || c >= 0x80 }

// appendReply appends the outcome of a command: ok, nil or the error.
func appendReply(b []byte, err error) []byte {
	switch {
	case err == nil:
		return append(b, "ok"...)
	case errors.Is(err, redis.Nil):
		return append(b, "nil"...)
	default:
		return append(append(b, "err "...), err.Error()...)
	}
}

func shortSHA(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func actorName(ctx context.Context) string {
	if a := kernel.ActorOf(ctx); a != nil {
		return a.Name()
	}
	return "<none>"
}
