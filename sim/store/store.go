package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// ErrInjected is the error a store command returns when a fault fires.
var ErrInjected = errors.New("sim: injected store fault")

// Store is the simulated Redis: one miniredis shared by every group, each group
// with its own go-redis client whose hook is both the yield point and the fault
// point, and which records what the store applied.
type Store struct {
	k       *kernel.Kernel
	host    kernel.Host
	hist    *history.History
	obs     sut.Observer
	spec    sut.Spec
	mr      *miniredis.Miniredis
	clients []*redis.Client
	states  map[string]observed
	// lockKeys maps a job to its lock's key, once a command named it.
	lockKeys map[string]string
	// unfinished are the jobs not yet terminal (see Unfinished).
	unfinished map[string]bool
	// runKeys is each idempotency key's value after the last command on it,
	// activeRuns each org's active runs after the last count (runkeys.go).
	runKeys    map[string]string
	activeRuns map[string]int
	// scripts maps a script's SHA1 to the name the system gives it;
	// parsedArgs and parsed are the last command taken apart (command.go).
	scripts    map[string]string
	parsedArgs []any
	parsed     sut.StoreCommand
	// live is a real Redis server instead of miniredis (live.go); nil in
	// every simulated run.
	live *liveRedis
	// point is the fault point being asked, reused by every command (an
	// injector keeps nothing of it).
	point kernel.Point
}

// New starts the store of a world whose system promises spec. Its TTL clock
// follows the kernel's virtual time, and a stalled run closes it.
func New(env kernel.Env, spec sut.Spec) *Store {
	mr := NewMiniredis(int(env.Seeds.Root & 0x7fffffff))
	// Dial starts miniredis's command table; its net.Pipe connection is
	// not used.
	if c, err := mr.Dial(); err == nil {
		_ = c.Close()
	}
	env.Kernel.OnAdvance(mr.SetTime)
	env.Kernel.OnStall(mr.Close)
	return &Store{k: env.Kernel, host: env.Host, hist: env.History, obs: env.Observer, spec: spec, mr: mr,
		states: map[string]observed{}, lockKeys: map[string]string{}, unfinished: map[string]bool{}}
}

// NewMiniredis returns the miniredis every world's store runs on, not yet
// serving: seeded, its TTLs expiring on the clock SetTime sets (from the
// kernel's epoch), one Lua VM for every script instead of one per EVALSHA
// (patched miniredis, third_party/), where read-only globals keep scripts
// apart. The engine's differential test against redis-server runs on it.
func NewMiniredis(seed int) *miniredis.Miniredis {
	mr := miniredis.NewMiniRedis()
	mr.Seed(seed)
	mr.SetTime(kernel.Epoch)
	mr.ClockTTL(true)
	mr.ReuseLua(true)
	return mr
}

// Unfinished counts the jobs not yet terminal: every job the store holds in a
// non-terminal state, and every accepted job it holds no state for yet.
func (s *Store) Unfinished() int { return len(s.unfinished) }

// ExpectJob notes a job the broker accepted: until the store holds a state for
// it, it counts as unfinished.
func (s *Store) ExpectJob(jobID string) {
	if _, ok := s.states[jobID]; !ok {
		s.unfinished[jobID] = true
	}
}

// noteState keeps Unfinished up to date with a committed state.
func (s *Store) noteState(jobID, st string) {
	if s.spec.IsTerminal(st) {
		delete(s.unfinished, jobID)
	} else {
		s.unfinished[jobID] = true
	}
}

// observed is the last committed state and version seen for a job.
type observed struct {
	state   string
	version int64
}

// Client returns a new go-redis client for group, configured so that nothing
// in it runs on wall time or retries on its own (DESIGN.md §3).
func (s *Store) Client(group string) *redis.Client {
	if s.live != nil {
		return s.liveClient(group)
	}
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
	c.AddHook(&storeHook{s: s, group: group, resend: map[*kernel.Actor]sentAt{}})
	s.clients = append(s.clients, c)
	return c
}

// dial connects to miniredis over a memConn, which miniredis serves on the
// caller's goroutine.
func (s *Store) dial() (net.Conn, error) {
	srv := s.mr.Server()
	if srv == nil {
		return nil, net.ErrClosed
	}
	return newMemConn(srv), nil
}

// The store is the observers' sut.View: reads straight from miniredis, no
// client, no yield, no fault.
var _ sut.View = (*Store)(nil)

// Keys lists every key, sorted.
func (s *Store) Keys() []string {
	if s.live != nil {
		return s.live.keys()
	}
	keys := s.mr.Keys()
	sort.Strings(keys)
	return keys
}

// Get reads a string key.
func (s *Store) Get(key string) (string, bool) {
	if s.live != nil {
		return s.live.get(key)
	}
	v, err := s.mr.Get(key)
	return v, err == nil
}

// Members reads a set.
func (s *Store) Members(key string) []string {
	if s.live != nil {
		return s.live.members(key)
	}
	m, _ := s.mr.Members(key)
	return m
}

// ZScores reads a sorted set.
func (s *Store) ZScores(key string) map[string]float64 {
	if s.live != nil {
		return s.live.zscores(key)
	}
	members, _ := s.mr.ZMembers(key)
	out := make(map[string]float64, len(members))
	for _, m := range members {
		out[m], _ = s.mr.ZScore(key, m)
	}
	return out
}

// Field reads one hash field.
func (s *Store) Field(key, field string) string {
	if s.live != nil {
		return s.live.field(key, field)
	}
	return s.mr.HGet(key, field)
}

// TTL is a key's remaining time to live.
func (s *Store) TTL(key string) time.Duration {
	if s.live != nil {
		return s.live.ttl(key)
	}
	return s.mr.TTL(key)
}

// Hash reads a whole hash; ok is false when key holds no hash.
func (s *Store) Hash(key string) (map[string]string, bool) {
	if s.live != nil {
		return s.live.hash(key)
	}
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

// The store reads streams too (sut.StreamView).
var _ sut.StreamView = (*Store)(nil)

// StreamEntry reads one entry of a stream by its ID.
func (s *Store) StreamEntry(key, id string) (sut.StreamEntry, bool) {
	if s.live != nil {
		return s.live.streamEntry(key, id)
	}
	entries, _ := s.mr.Stream(key)
	i, found := sort.Find(len(entries), func(i int) int { return compareStreamIDs(id, entries[i].ID) })
	if !found {
		return sut.StreamEntry{}, false
	}
	return sut.StreamEntry{ID: entries[i].ID, Values: slices.Clone(entries[i].Values)}, true
}

// Stream reads a stream's entries, oldest first.
func (s *Store) Stream(key string) []sut.StreamEntry {
	if s.live != nil {
		return s.live.stream(key)
	}
	// miniredis hands out its live entries: copied, so that a later write
	// does not change what the observer read.
	entries, _ := s.mr.Stream(key)
	out := make([]sut.StreamEntry, len(entries))
	for i, e := range entries {
		out[i] = sut.StreamEntry{ID: e.ID, Values: slices.Clone(e.Values)}
	}
	return out
}

// StreamGroups reads a stream's consumer groups, by name, with their pending
// entries lists; idle times by the virtual clock.
func (s *Store) StreamGroups(key string) []sut.StreamGroup {
	if s.live != nil {
		return s.live.streamGroups(key)
	}
	groups, _ := s.mr.StreamGroups(key)
	now := kernel.Epoch.Add(s.k.Now())
	out := make([]sut.StreamGroup, len(groups))
	for i, g := range groups {
		out[i] = sut.StreamGroup{Name: g.Name, LastDeliveredID: g.LastID, Pending: make([]sut.PendingEntry, len(g.Pending))}
		for j, p := range g.Pending {
			out[i].Pending[j] = sut.PendingEntry{ID: p.ID, Consumer: p.Consumer, Deliveries: p.DeliveryCount,
				Idle: now.Sub(p.LastDelivery).Truncate(time.Millisecond)}
		}
		for _, c := range g.Consumers {
			out[i].Consumers = append(out[i].Consumers, c.Name)
		}
	}
	return out
}

// compareStreamIDs orders two full stream IDs ("ms-seq") as Redis does.
func compareStreamIDs(a, b string) int {
	ams, aseq := splitStreamID(a)
	bms, bseq := splitStreamID(b)
	if c := cmp.Compare(ams, bms); c != 0 {
		return c
	}
	return cmp.Compare(aseq, bseq)
}

func splitStreamID(id string) (ms, seq uint64) {
	m, q, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(q, 10, 64)
	return ms, seq
}

// Close closes every client and miniredis.
func (s *Store) Close() {
	for _, c := range s.clients {
		_ = c.Close()
	}
	if s.live != nil {
		_ = s.live.view.Close()
		return
	}
	s.mr.Close()
}

// readOnly commands never change data; everything else (scripts included) may.
var readOnly = map[string]bool{
	"get": true, "mget": true, "hget": true, "hgetall": true, "hmget": true, "exists": true,
	"scard": true, "smembers": true, "sismember": true, "zrange": true, "zrangebyscore": true,
	"zscore": true, "zcard": true, "lrange": true, "llen": true, "ttl": true, "pttl": true,
	"type": true, "strlen": true, "scan": true, "keys": true, "ping": true, "evalsha_ro": true, "eval_ro": true,
	// A stream's reads; XREADGROUP writes (it moves the group and its
	// pending entries), XREAD does not.
	"xrange": true, "xrevrange": true, "xlen": true, "xpending": true, "xinfo": true, "xread": true,
}

// handshake commands run while go-redis opens a connection, on the calling
// actor's goroutine: traced, never a yield or fault point.
var handshake = map[string]bool{"hello": true, "auth": true, "select": true, "client": true}

type storeHook struct {
	s     *Store
	group string
	// resend holds, per actor, when its script last came back NOSCRIPT:
	// go-redis sends it again as EVAL, and the command was issued then.
	resend map[*kernel.Actor]sentAt
}

type sentAt struct {
	time time.Duration
	step uint64
}

func (h *storeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *storeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		k := h.s.k
		a := k.Current(ctx, "redis pipeline")
		sent, sentStep := k.Now(), k.Step()
		a.Yield()
		err := next(ctx, cmds)
		k.Tracef(a.Name(), "redis pipeline n=%d err=%v", len(cmds), err)
		for _, c := range cmds {
			h.observe(a, c, c.Err(), sent, sentStep)
		}
		return err
	}
}

func (h *storeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	process := h.process(next)
	return func(ctx context.Context, cmd redis.Cmder) (err error) {
		sent, returned := h.s.k.Now(), false
		defer func() { h.recordRunKey(ctx, cmd, sent, err, returned) }()
		err = process(ctx, cmd)
		returned = true
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
	s := h.s
	if _, ok := s.obs.JobKey(firstKey(name, cmd.Args())); ok {
		s.hist.Redis.FailedJobReads++
	}
}

// process is the hook proper: a yield point, a fault point, and the observer
// of what each command committed.
func (h *storeHook) process(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s := h.s
		k := s.k
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
		sent, sentStep := k.Now(), k.Step()
		if first, ok := h.resend[a]; ok && sut.SendsScriptSource(name) {
			sent, sentStep = first.time, first.step
		}
		delete(h.resend, a)
		a.Yield()

		args := cmd.Args()
		var p *kernel.Point
		var fact sut.CommandFact
		var f kernel.Fault
		var fired bool
		var target string // only a fault needs it as a string
		if s.host.FaultsArmed() {
			p = &s.point
			*p = kernel.Point{Kind: history.PointRedis, Actor: a.Name(), Group: a.Group().Name, Cmd: name, Args: args,
				Write: !readOnly[name], Key: firstKey(name, args), Fact: s.obs.Command(s.command(name, args))}
			fact = p.Fact // p is the store's, and another command may reuse it
			if f, fired = s.host.Fault(p); fired {
				target = h.describe(name, args)
			}
		}
		s.hist.Redis.Commands++
		if sut.IsScriptCommand(name) {
			s.hist.Redis.Scripts++
		}
		if fired {
			s.hist.Redis.Faulted++
			s.host.RecordFault(a, p, f, target)
			switch f.Effect {
			case history.EffectFailBeforeApply:
				h.lockCommandFailed(a, fact, sentAt{sent, sentStep}, ErrInjected)
				cmd.SetErr(ErrInjected)
				k.Tracef(a.Name(), "redis %s -> injected error, not applied", target)
				return ErrInjected
			case history.EffectCrash:
				s.host.Crash(a)
				a.ExitIfDead()
			case history.EffectPause:
				k.PauseGroup(a.Group().Name, k.Now()+f.Duration)
				a.Yield()
			case history.EffectDelay:
				a.SleepUntil(k.Now() + f.Duration)
			}
		}

		err := next(ctx, cmd)
		if (name == "evalsha" || name == "evalsha_ro") && redis.HasErrorPrefix(err, "NOSCRIPT") {
			h.resend[a] = sentAt{sent, sentStep}
		}
		line := append(k.TraceStart(a.Name()), "redis "...)
		line = appendTarget(line, name, args)
		line = append(line, " -> "...)
		k.TraceEnd(appendReply(line, err))
		h.observe(a, cmd, err, sent, sentStep)
		if fired {
			switch f.Effect {
			case history.EffectReplyLostAfterApply:
				h.lockCommandFailed(a, fact, sentAt{sent, sentStep}, err)
				cmd.SetErr(ErrInjected)
				k.Tracef(a.Name(), "redis reply lost")
				return ErrInjected
			case history.EffectCrashAfterApply:
				s.host.Crash(a)
				a.ExitIfDead()
			}
		}
		return err
	}
}

// observe records every transition the command committed (a new version, even
// to the same state), read straight from
// miniredis (no client, no yield).
// err is the command's error as the hook chain returned it: inside the chain
// go-redis has not yet set it on cmd (a NOSCRIPT reply, say).
func (h *storeHook) observe(a *kernel.Actor, cmd redis.Cmder, err error, sent time.Duration, sentStep uint64) {
	name := strings.ToLower(cmd.Name())
	s := h.s
	if readOnly[name] {
		if err == nil {
			if fact := s.obs.Command(s.command(name, cmd.Args())); fact.Scan != "" {
				s.hist.Scans = append(s.hist.Scans, history.Scan{Step: s.k.Step(), Time: s.k.Now(), Actor: a.Name(), State: fact.Scan})
			}
		}
		return
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return
	}
	c := s.command(name, cmd.Args())
	fact := s.obs.Command(c)
	if fact.LockKey != "" {
		h.observeLock(a, fact, sentAt{sent, sentStep})
		return
	}
	for _, key := range s.obs.Touched(h.s, c) {
		id, _ := s.obs.JobKey(key)
		job := s.obs.Job(h.s, key)
		st, v := job.State, job.Version
		prev := h.s.states[id]
		if st == prev.state && v == prev.version {
			continue
		}
		h.s.states[id] = observed{state: st, version: v}
		s.hist.States = append(s.hist.States, history.StateChange{Step: s.k.Step(), Time: s.k.Now(), Actor: a.Name(),
			JobID: id, From: prev.state, To: st, Version: v, Sent: sent, Token: fact.Token, Holder: h.lockHolder(id),
			Gen: job.Gen, DispatchID: job.DispatchID, ResultPtr: job.ResultPtr})
		s.k.Tracef(a.Name(), "state %s %s -> %s v%d", id, history.StateOrNone(prev.state), st, v)
		s.noteState(id, st)
	}
}

// lockCommandFailed records that a lock command's issuer saw an error it
// would not have: applied (err nil) its reply was lost, and observe has just
// recorded it; not applied, it goes with the lock commands that failed.
func (h *storeHook) lockCommandFailed(a *kernel.Actor, fact sut.CommandFact, sent sentAt, err error) {
	s := h.s
	switch {
	case fact.LockKey == "":
	case err == nil || errors.Is(err, redis.Nil):
		s.hist.Locks[len(s.hist.Locks)-1].Failed = true
	default:
		s.hist.LockFailures = append(s.hist.LockFailures, history.LockEvent{Step: s.k.Step(), Time: s.k.Now(),
			Actor: a.Name(), JobID: fact.JobID, Token: fact.Token, Op: fact.LockOp, Sent: sent.time, SentStep: sent.step, Failed: true})
	}
}

// observeLock records who holds a job's lock after a command on it.
func (h *storeHook) observeLock(a *kernel.Actor, fact sut.CommandFact, sent sentAt) {
	s := h.s
	holder, _ := h.s.Get(fact.LockKey)
	ev := history.LockEvent{Step: s.k.Step(), Time: s.k.Now(), Actor: a.Name(), JobID: fact.JobID, Token: fact.Token,
		Op: fact.LockOp, Held: holder == fact.Token, Sent: sent.time, SentStep: sent.step}
	if ev.Held {
		ev.Until = s.k.Now() + h.s.TTL(fact.LockKey)
	}
	s.hist.Locks = append(s.hist.Locks, ev)
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
	if sut.IsScriptCommand(name) {
		i = 3
	}
	if len(args) > i {
		if s, ok := args[i].(string); ok {
			return s
		}
	}
	return ""
}

// describe names a command by its first key; a script by its SHA1 (EVALSHA)
// or by its name alone (EVAL), never by its source.
func (h *storeHook) describe(name string, args []any) string {
	if sut.IsScriptCommand(name) && !sut.SendsScriptSource(name) && len(args) > 1 {
		return fmt.Sprintf("%s %s %s", name, shortSHA(fmt.Sprint(args[1])), firstKey(name, args))
	}
	if sut.SendsScriptSource(name) {
		return name + " " + firstKey(name, args)
	}
	return strings.TrimSpace(name + " " + firstKey(name, args))
}

// appendTarget appends describe(name, args) without building a string.
func appendTarget(b []byte, name string, args []any) []byte {
	key := firstKey(name, args)
	switch {
	case (name == "evalsha" || name == "evalsha_ro") && len(args) > 1:
		sha, ok := args[1].(string)
		if !ok {
			sha = fmt.Sprint(args[1])
		}
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, shortSHA(sha)...)
		b = append(b, ' ')
		return append(b, key...)
	case sut.SendsScriptSource(name):
		b = append(b, name...)
		b = append(b, ' ')
		return append(b, key...)
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
