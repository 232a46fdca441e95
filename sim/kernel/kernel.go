package kernel

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
)

// Kernel runs actors one at a time. Each actor is a goroutine that runs only
// while it holds the baton; it hands the baton back at every yield point (a Redis
// command, a bus publish or ack, a clock wait) and the seeded PRNG picks who runs
// next. Virtual time advances only when no actor is runnable, straight to the
// next timer. The Go scheduler never decides an order.
type Kernel struct {
	strategy Strategy
	epoch    time.Time
	line     []byte // Tracef's buffer
	// stepText is "step=<stepAt>", timeText " t=<timeAt> actor=": a step
	// writes a few lines, and time moves far less often than that.
	stepText []byte
	stepAt   uint64
	timeText []byte
	timeAt   time.Duration
	reapDue  bool // an actor was killed or finished since the last reap
	now      time.Duration
	step     uint64
	actors   []*Actor // live actors, creation order
	nextID   int
	timers   timerHeap
	timerSeq uint64
	trace    *Trace
	current  *Actor
	groups   map[string]*Group

	onAdvance []func(time.Time)
	onStall   func()

	// idle are runners whose actor finished, waiting for the next one.
	idle []*runner
	// freeTimers are timers that left the heap, for the next addTimer.
	freeTimers []*timer

	// fault is the first panic an actor or the controller raised: a
	// HarnessFault or a SystemPanic (Recovered).
	fault    error
	stalled  atomic.Pointer[string]
	progress atomic.Uint64
	waiting  atomic.Bool

	// stepAtNow is the step at which virtual time last moved; livelockAfter
	// the steps it may stand still (MaxStepsAtOneInstant).
	stepAtNow, livelockAfter uint64

	// atStep runs once, on the controller, when the step count reaches
	// atStepN: a branch's fork.
	atStep  func()
	atStepN uint64
	// muted drops trace lines unformatted: a branch's prefix.
	muted bool
	// rt is live mode (realtime.go); nil in every simulated run.
	rt *realtime
}

// ErrActorDead is what a killed actor's deferred calls get from a yield point
// while the actor exits.
var ErrActorDead = errors.New("sim: actor crashed")

// Epoch is virtual time zero of every run.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New returns a kernel whose scheduling draws come from rng and whose
// decisions go into trace.
func New(rng *rand.Rand, trace *Trace) *Kernel {
	return &Kernel{strategy: uniform{rng}, epoch: Epoch, trace: trace,
		groups: map[string]*Group{}, livelockAfter: MaxStepsAtOneInstant}
}

// UseStrategy makes s pick the actors from now on (the default is the
// uniform pick from New's rng).
func (k *Kernel) UseStrategy(s Strategy) { k.strategy = s }

// Reseeded tells the strategy that its stream was reseeded (a branch): PCT
// draws its change points still to come again.
func (k *Kernel) Reseeded() {
	if p, ok := k.strategy.(*pct); ok {
		p.reseeded()
	}
}

// AtStep runs fn on the controller once the run has taken step decisions,
// before the next actor is picked: where a branch forks. A run that ends
// sooner never calls it.
func (k *Kernel) AtStep(step uint64, fn func()) { k.atStep, k.atStepN = fn, step }

// Mute drops every trace line until Unmute, without formatting it: a
// branch replays its prefix this way, since only the branch's own lines
// are its record.
func (k *Kernel) Mute() { k.muted = true }

// Unmute records trace lines again.
func (k *Kernel) Unmute() { k.muted = false }

// Group is a set of actors that crash, restart and pause together: one
// replica, one worker, the gateway.
type Group struct {
	Name        string
	epoch       int           // bumped by a crash: the group's timers die with it
	pausedUntil time.Duration // no actor of the group runs before this
	crashed     bool
}

// Crashed reports whether the group is down.
func (g *Group) Crashed() bool { return g.crashed }

// PausedUntil is the virtual time before which the group's actors do not run.
func (g *Group) PausedUntil() time.Duration { return g.pausedUntil }

// Groups lists every group so far, by name.
func (k *Kernel) Groups() []*Group {
	out := make([]*Group, 0, len(k.groups))
	for _, g := range k.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Actor is one schedulable activity.
type Actor struct {
	k        *Kernel
	id       int
	name     string
	grp      *Group
	grpEpoch int
	r        *runner // the coroutine the actor runs on
	runnable bool
	dead     bool // killed: exits at its next yield point
	exiting  bool
	done     bool
	outside  bool // parked on a call to a real server (AwaitOutside)
	ctx      context.Context
	actx     actorCtx // what ctx points to
	pickMark uint64   // PCT's mark of the actors runnable at this pick
}

// Name is the actor's trace name ("replica-2/sys.job.submit#14").
func (a *Actor) Name() string { return a.name }

// Group returns the actor's group.
func (a *Actor) Group() *Group { return a.grp }

// Kernel is the kernel the actor runs on: an observer running on the actor
// reads the true step and time from it.
func (a *Actor) Kernel() *Kernel { return a.k }

type actorKey struct{}

// actorCtx is an actor's context: context.Background carrying the actor,
// kept in the Actor itself to save context.WithValue's allocation per spawn.
type actorCtx struct{ a *Actor }

func (*actorCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*actorCtx) Done() <-chan struct{}       { return nil }
func (*actorCtx) Err() error                  { return nil }
func (c *actorCtx) String() string            { return "sim actor " + c.a.name }
func (c *actorCtx) Value(key any) any {
	if _, ok := key.(actorKey); ok {
		return c.a
	}
	return nil
}

// ActorOf returns the actor a context belongs to, or nil.
func ActorOf(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}

// HoldsBaton returns the actor of ctx if it holds the baton, else nil: the
// cheap check before Current's message is built.
func (k *Kernel) HoldsBaton(ctx context.Context) *Actor {
	if a := ActorOf(ctx); a != nil && a == k.current {
		return a
	}
	return nil
}

// Current returns the actor of ctx and asserts that it holds the baton: a
// call from any other goroutine would corrupt the schedule. A broken
// assertion is its caller's breach of the ports' contract (Classify).
func (k *Kernel) Current(ctx context.Context, what string) *Actor {
	a := ActorOf(ctx)
	if a == nil {
		panic(fmt.Sprintf("sim: %s from a context that carries no actor", what))
	}
	if a != k.current {
		cur := "<controller>"
		if k.current != nil {
			cur = k.current.name
		}
		panic(fmt.Sprintf("sim: %s by actor %s while %s holds the baton", what, a.name, cur))
	}
	return a
}

// Now is the virtual time since Epoch.
func (k *Kernel) Now() time.Duration { return k.now }

// Step is the number of scheduling decisions so far.
func (k *Kernel) Step() uint64 { return k.step }

// OnAdvance calls f with the new virtual time (since Epoch) whenever time
// moves: the store keeps its TTL clock in step this way.
func (k *Kernel) OnAdvance(f func(time.Time)) { k.onAdvance = append(k.onAdvance, f) }

// OnStall calls f when the watchdog stops a run: closing the store unblocks an
// actor stuck in a command.
func (k *Kernel) OnStall(f func()) { k.onStall = f }

// Group returns the named group, creating it.
func (k *Kernel) Group(name string) *Group {
	g, ok := k.groups[name]
	if !ok {
		g = &Group{Name: name}
		k.groups[name] = g
	}
	return g
}

// Tracef records one decision line: "step=N t=S.mmms actor=A " and the
// message, built in one reused buffer.
func (k *Kernel) Tracef(actor string, format string, args ...any) {
	if k.muted {
		return
	}
	k.TraceEnd(fmt.Appendf(k.TraceStart(actor), format, args...))
}

// TraceStart begins a trace line in the reused buffer, up to the message.
// The lines written for nearly every event append their message without fmt
// and finish with TraceEnd: the same bytes as Tracef at a fraction of the cost.
func (k *Kernel) TraceStart(actor string) []byte {
	if k.muted {
		return k.line[:0] // TraceEnd drops it
	}
	if k.timeText == nil || k.timeAt != k.now {
		k.timeText = append(appendTime(append(k.timeText[:0], " t="...), k.now), " actor="...)
		k.timeAt = k.now
	}
	if k.stepText == nil || k.stepAt != k.step {
		k.stepText = strconv.AppendUint(append(k.stepText[:0], "step="...), k.step, 10)
		k.stepAt = k.step
	}
	b := append(k.line[:0], k.stepText...)
	b = append(b, k.timeText...)
	b = append(b, actor...)
	return append(b, ' ')
}

// TraceEnd records a line begun with TraceStart.
func (k *Kernel) TraceEnd(b []byte) {
	k.line = b
	if k.muted {
		return
	}
	k.trace.add(b)
}

// Spawn creates a runnable actor in group running fn. It may be called by the
// controller or by the actor holding the baton.
func (k *Kernel) Spawn(group, name string, fn func(ctx context.Context)) *Actor {
	return k.SpawnTask(group, group+"/"+name, TaskFunc(fn))
}

// Task is an actor's body as a value: a caller that keeps a struct for the
// work anyway spawns it as is, without a closure.
type Task interface{ Run(ctx context.Context) }

// TaskFunc runs a function as a Task.
type TaskFunc func(ctx context.Context)

// Run calls f.
func (f TaskFunc) Run(ctx context.Context) { f(ctx) }

// SpawnTask is Spawn for a caller that already built the actor's full name,
// "group/name", and holds its body as a Task.
func (k *Kernel) SpawnTask(group, actor string, t Task) *Actor {
	g := k.Group(group)
	k.nextID++
	a := &Actor{k: k, id: k.nextID, name: actor, grp: g, grpEpoch: g.epoch, runnable: true}
	a.actx.a = a
	a.ctx = &a.actx
	k.actors = append(k.actors, a)
	var r *runner
	if n := len(k.idle); n > 0 {
		r = k.idle[n-1]
		k.idle = k.idle[:n-1]
	} else {
		r = newRunner()
	}
	r.job = job{a, t}
	a.r = r
	return a
}

// Spawner is the sut.Spawn port of a group: a system starts its concurrent
// work through it, each piece as an actor of the group.
func (k *Kernel) Spawner(group string) sut.Spawn {
	return func(name string, run func(ctx context.Context)) { k.Spawn(group, name, run) }
}

// A runner is a coroutine (iter.Pull) that runs actors one after another. The
// kernel hands an actor the baton by resuming its runner, and the actor hands
// it back by yielding: a direct switch between two goroutines, which the Go
// scheduler neither sees nor decides, and cheaper than a channel hand-off. A
// new actor on a fresh goroutine grows its stack again through go-redis and
// Lua; a reused runner keeps it. Which runner runs an actor changes nothing.
type runner struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	job   job // the actor to run when next resumes an idle runner
}

type job struct {
	a    *Actor
	task Task
}

func newRunner() *runner {
	r := &runner{}
	r.next, r.stop = iter.Pull(func(yield func(struct{}) bool) {
		r.yield = yield
		for {
			j := r.job
			r.job = job{}
			if j.a == nil {
				return
			}
			j.a.main(j.task, r)
			if !yield(struct{}{}) { // the actor ended: the baton goes back
				return
			}
		}
	})
	return r
}

// crash is the panic that unwinds a killed actor from its yield point, its
// deferred calls running: runtime.Goexit inside a coroutine would end the
// kernel's goroutine too.
type crash struct{}

// main runs the actor once it is handed the baton. An actor that ends, killed
// or not, parks its runner in k.idle before handing the baton back, so the
// kernel never sees the list change under it.
func (a *Actor) main(task Task, r *runner) {
	defer func() {
		if rec := recover(); rec != nil {
			if _, ok := rec.(crash); !ok && a.k.fault == nil {
				a.k.fault = a.k.Recovered("actor "+a.name, rec)
			}
		}
		a.done = true
		a.k.reapDue = true
		a.k.idle = append(a.k.idle, r)
	}()
	if !a.dead {
		task.Run(a.ctx)
	}
}

// Kill marks the actor dead: it exits at its next yield point, or when reap
// hands it the baton.
func (a *Actor) Kill() {
	a.dead = true
	a.k.reapDue = true
}

// Yield hands the baton back; the actor stays runnable.
func (a *Actor) Yield() {
	a.runnable = true
	a.park()
}

// SleepUntil parks the actor until virtual time at.
func (a *Actor) SleepUntil(at time.Duration) {
	a.runnable = false
	t := a.k.addTimer(at, a.grp, nil)
	t.wake, t.reuse = a, true
	a.park()
}

func (a *Actor) park() {
	k := a.k
	if k.current != a {
		panic(fmt.Sprintf("sim: actor %s yielded without the baton", a.name))
	}
	if !a.r.yield(struct{}{}) {
		panic(crash{}) // Shutdown stopped the runner
	}
	a.ExitIfDead()
}

// ExitIfDead ends a killed actor at its yield point (a crash). Deferred calls
// still run; a store call they make fails instead of exiting twice.
func (a *Actor) ExitIfDead() {
	if a.dead && !a.exiting {
		a.exiting = true
		panic(crash{})
	}
}

// Dead reports whether the actor was killed.
func (a *Actor) Dead() bool { return a.dead }

// Exiting reports whether a killed actor is running its deferred calls: a
// yield point must fail them, not exit twice.
func (a *Actor) Exiting() bool { return a.exiting }

// CrashGroup kills every actor of the group and drops its timers. The calling
// actor, if it belongs to the group, dies at its next yield point.
func (k *Kernel) CrashGroup(name string) {
	g := k.Group(name)
	g.crashed = true
	g.epoch++
	for _, a := range k.actors {
		if a.grp == g {
			a.Kill()
		}
	}
}

// RestartGroup lets a crashed group run actors again.
func (k *Kernel) RestartGroup(name string) {
	g := k.Group(name)
	g.crashed = false
	g.pausedUntil = 0
}

// PauseGroup stops the group's actors from running until virtual time until
// (a GC pause, a stopped VM): its timers still fall due, its locks still expire.
func (k *Kernel) PauseGroup(name string, until time.Duration) {
	g := k.Group(name)
	if until > g.pausedUntil {
		g.pausedUntil = until
		k.addTimer(until, nil, AlarmFunc(func() {})) // time must be able to reach the pause's end
	}
}

// timer is an alarm the controller fires at virtual time at, unless its group
// crashed after it was set. A sleeping actor's timer makes it runnable (wake)
// instead of firing one: one allocation less per sleep.
type timer struct {
	at       time.Duration
	seq      uint64
	alarm    Alarm
	wake     *Actor
	grp      *Group
	grpEpoch int
	stopped  bool
	// reuse: no one outside the kernel holds the timer (a sleep, At), so
	// once it leaves the heap it goes back to the kernel's free list.
	reuse bool
}

// timerHeap is a binary min-heap on (at, seq), written out rather than
// through container/heap's interface calls: the kernel pushes and pops a
// timer for nearly every sleep. Each entry carries its timer's key, so that
// sifting compares without loading the timers. (at, seq) is unique, so the
// order timers come out in is the same for any correct heap.
type timerHeap []timerEntry

type timerEntry struct {
	at  time.Duration
	seq uint64
	t   *timer
}

func (h timerHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *timerHeap) push(t *timer) {
	*h = append(*h, timerEntry{t.at, t.seq, t})
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *timerHeap) pop() {
	q := *h
	n := len(q) - 1
	q[0] = q[n]
	q[n] = timerEntry{}
	q = q[:n]
	for i := 0; ; {
		m, l := i, 2*i+1
		if l < n && q.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
}

func (h timerHeap) peek() (*timer, bool) {
	if len(h) == 0 {
		return nil, false
	}
	return h[0].t, true
}

// addTimer schedules alarm on the controller at virtual time at (never
// earlier than now). A timer of a group dies with the group's crash.
func (k *Kernel) addTimer(at time.Duration, g *Group, alarm Alarm) *timer {
	if at < k.now {
		at = k.now
	}
	k.timerSeq++
	var t *timer
	if n := len(k.freeTimers); n > 0 {
		t = k.freeTimers[n-1]
		k.freeTimers = k.freeTimers[:n-1]
		*t = timer{at: at, seq: k.timerSeq, alarm: alarm, grp: g}
	} else {
		t = &timer{at: at, seq: k.timerSeq, alarm: alarm, grp: g}
	}
	if g != nil {
		t.grpEpoch = g.epoch
	}
	k.timers.push(t)
	return t
}

// release puts a timer that left the heap back on the free list, if the
// kernel alone holds it.
func (k *Kernel) release(t *timer) {
	if t.reuse {
		*t = timer{}
		k.freeTimers = append(k.freeTimers, t)
	}
}

// At runs fn on the controller at virtual time at.
func (k *Kernel) At(at time.Duration, fn func()) { k.addTimer(at, nil, AlarmFunc(fn)).reuse = true }

// Alarm is what a timer does when it falls due, as a value: a caller that
// keeps a struct for it anyway sets it without a closure.
type Alarm interface{ Fire() }

// AlarmFunc is a function as an Alarm.
type AlarmFunc func()

// Fire calls f.
func (f AlarmFunc) Fire() { f() }

// AtAlarm runs a.Fire on the controller at virtual time at.
func (k *Kernel) AtAlarm(at time.Duration, a Alarm) { k.addTimer(at, nil, a).reuse = true }

// fireDue runs every timer due at the current time.
func (k *Kernel) fireDue() {
	for {
		t, ok := k.timers.peek()
		if !ok || t.at > k.now {
			return
		}
		k.timers.pop()
		if t.stopped || (t.grp != nil && t.grp.epoch != t.grpEpoch) {
			k.release(t)
			continue
		}
		t.stopped = true
		if t.wake != nil {
			t.wake.runnable = true
		} else {
			t.alarm.Fire()
		}
		k.release(t)
	}
}

// nextTimerAt returns when the next live timer falls due.
func (k *Kernel) nextTimerAt() (time.Duration, bool) {
	for {
		t, ok := k.timers.peek()
		if !ok {
			return 0, false
		}
		if t.stopped || (t.grp != nil && t.grp.epoch != t.grpEpoch) {
			k.timers.pop()
			k.release(t)
			continue
		}
		return t.at, true
	}
}

func (k *Kernel) advanceTo(at time.Duration) {
	if at <= k.now {
		return
	}
	k.now = at
	k.stepAtNow = k.step
	abs := k.epoch.Add(at)
	for _, f := range k.onAdvance {
		f(abs)
	}
}

// reap lets killed actors exit, in creation order, and forgets finished ones.
// It runs before every step, so it returns at once when no actor was killed
// or finished since the last time.
func (k *Kernel) reap() {
	if !k.reapDue {
		return
	}
	k.reapDue = false
	live := k.actors[:0]
	for _, a := range k.actors {
		if a.dead && !a.done && !a.outside {
			k.hand(a)
		}
		if !a.done {
			live = append(live, a)
		}
	}
	for i := len(live); i < len(k.actors); i++ {
		k.actors[i] = nil
	}
	k.actors = live
}

// hand gives a the baton and waits for it to come back.
func (k *Kernel) hand(a *Actor) {
	k.current = a
	k.waiting.Store(true)
	a.r.next()
	k.waiting.Store(false)
	k.progress.Add(1)
	k.current = nil
}

// ErrDeadlock is returned when actors are alive but none can ever run again.
type ErrDeadlock struct {
	Actors []string
	Tail   string
}

func (e *ErrDeadlock) Error() string {
	return fmt.Sprintf("deadlock: no runnable actor and no timer, %d actors alive (%s)\ntrace tail:\n%s",
		len(e.Actors), strings.Join(e.Actors, ", "), e.Tail)
}

// Run schedules actors until stop reports true or virtual time would pass limit
// (then time stops at limit). A panic, in an actor or on the controller (an
// alarm, stop, a fork), ends the run with its error (Recovered) instead of
// the process.
func (k *Kernel) Run(limit time.Duration, stop func() bool) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			k.current = nil
			err = k.Recovered("controller", rec)
			if k.fault == nil {
				k.fault = err
			}
		}
	}()
	var runnable []*Actor
	for {
		k.reap()
		if err := k.failure(); err != nil {
			return err
		}
		if stop != nil && stop() {
			return nil
		}
		if k.rt != nil {
			k.liveSync()
		}
		k.fireDue()
		runnable = runnable[:0]
		for _, a := range k.actors {
			if a.runnable && !a.done && a.grp.pausedUntil <= k.now {
				runnable = append(runnable, a)
			}
		}
		if len(runnable) == 0 {
			if k.rt != nil {
				if k.liveIdle(limit) {
					return nil
				}
				continue
			}
			at, ok := k.nextTimerAt()
			if !ok {
				if len(k.actors) == 0 {
					return nil
				}
				return k.deadlock()
			}
			if at > limit {
				k.advanceTo(limit)
				return nil
			}
			k.advanceTo(at)
			continue
		}
		if k.step-k.stepAtNow >= k.livelockAfter {
			return k.livelock()
		}
		if k.atStep != nil && k.step >= k.atStepN {
			fork := k.atStep
			k.atStep = nil
			fork()
		}
		a := runnable[0]
		if len(runnable) > 1 {
			a = k.strategy.Pick(runnable)
		}
		k.step++
		if !k.muted {
			k.TraceEnd(append(k.TraceStart(a.name), "run"...))
		}
		k.hand(a)
	}
}

func (k *Kernel) failure() error {
	if k.fault != nil {
		return k.fault
	}
	if s := k.stalled.Load(); s != nil {
		return fmt.Errorf("sim: %s", *s)
	}
	return nil
}

// MaxStepsAtOneInstant bounds the steps actors may take while virtual time
// stands still. A whole seed takes some 10,000-40,000 steps; an actor that
// loops without ever waiting on the clock (a poll every 0s) would keep the
// run at one instant for ever.
const MaxStepsAtOneInstant = 1_000_000

// ErrLivelock is Run's error when actors kept running and virtual time
// never moved on.
type ErrLivelock struct {
	At    time.Duration
	Steps uint64
	Tail  string
}

func (e *ErrLivelock) Error() string {
	return fmt.Sprintf("livelock: %d steps at virtual time %s without time moving on\ntrace tail:\n%s", e.Steps, e.At, e.Tail)
}

func (k *Kernel) livelock() error {
	return &ErrLivelock{At: k.now, Steps: k.step - k.stepAtNow, Tail: Tail(k.trace.Bytes(), 20)}
}

func (k *Kernel) deadlock() error {
	var names []string
	for _, a := range k.actors {
		names = append(names, a.name)
	}
	return &ErrDeadlock{Actors: names, Tail: Tail(k.trace.Bytes(), 20)}
}

// Tail is the last n lines of a trace, for failure messages.
func Tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Shutdown kills every actor and lets each exit at its yield point, so no
// goroutine outlives the run.
func (k *Kernel) Shutdown() {
	for _, a := range k.actors {
		a.Kill()
	}
	k.reap()
	for _, r := range k.idle {
		r.stop()
	}
	k.idle = nil
}

// Watch starts the wall-clock watchdog: an actor that blocks outside the kernel
// while holding the baton (a store call that never returns) stops the run with
// an error instead of hanging it. It never influences the schedule.
func (k *Kernel) Watch(limit time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() { // determinism-ok: wall-clock watchdog, observes only
		tick := time.NewTicker(limit / 4) // determinism-ok: watchdog
		defer tick.Stop()
		last, still := k.progress.Load(), time.Duration(0)
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			p := k.progress.Load()
			if p != last || !k.waiting.Load() {
				last, still = p, 0
				continue
			}
			still += limit / 4
			if still >= limit {
				msg := fmt.Sprintf("watchdog: an actor held the baton for %s of wall time without yielding (blocked outside the kernel)", limit)
				k.stalled.Store(&msg)
				if k.onStall != nil {
					k.onStall()
				}
				return
			}
		}
	}()
	return func() { close(done) }
}
