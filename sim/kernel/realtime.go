package kernel

import (
	"fmt"
	"time"
)

// realtime is the kernel's live mode: virtual time follows the wall clock
// from the moment the mode was switched on, and work arriving from outside
// the kernel (a real broker's deliveries, on its own goroutines) is posted
// to the controller, which runs it between steps. Actors still run one at a
// time, but the order is no longer a function of the seed: a live run is not
// deterministic and its checksum reproduces nothing.
type realtime struct {
	start time.Time
	inbox chan func()
}

// liveInbox bounds the external events waiting for the controller; a poster
// blocks while it is full, which only slows the broker's goroutines down.
const liveInbox = 4096

// UseRealTime switches the kernel to live mode (see realtime). Call it
// before the first Run; simulated runs never call it.
func (k *Kernel) UseRealTime() {
	now := time.Now() // determinism-ok: live mode only
	k.rt = &realtime{start: now, inbox: make(chan func(), liveInbox)}
	// A real store's clock (Redis TIME) reads the wall clock: time zero is
	// now, so the replicas' clocks and the store's agree.
	k.epoch = now.UTC().Truncate(time.Millisecond)
}

// EpochTime is the wall time of virtual time zero: Epoch in a simulation,
// the moment live mode began in a live run.
func (k *Kernel) EpochTime() time.Time { return k.epoch }

// Live reports whether the kernel runs on the wall clock.
func (k *Kernel) Live() bool { return k.rt != nil }

// Post hands fn to the controller, which runs it between steps. Any
// goroutine may call it, in live mode only.
func (k *Kernel) Post(fn func()) {
	if k.rt == nil {
		panic("sim: Post outside live mode") // a harness bug
	}
	k.rt.inbox <- fn
}

// liveSync brings virtual time up to the wall clock and runs what was
// posted meanwhile.
func (k *Kernel) liveSync() {
	k.advanceTo(time.Since(k.rt.start)) // determinism-ok: live mode only
	for {
		select {
		case fn := <-k.rt.inbox:
			fn()
		default:
			return
		}
	}
}

// liveIdle waits, with nothing runnable, until the next timer falls due,
// limit passes, or something is posted. It reports whether limit was reached.
// Unlike the simulation, no timer and nothing runnable is not a deadlock:
// the broker may still deliver.
func (k *Kernel) liveIdle(limit time.Duration) bool {
	until := limit
	if at, ok := k.nextTimerAt(); ok && at < until {
		until = at
	}
	wait := until - time.Since(k.rt.start) // determinism-ok: live mode only
	if wait > 0 {
		t := time.NewTimer(wait) // determinism-ok: live mode only
		select {
		case fn := <-k.rt.inbox:
			fn()
		case <-t.C:
		}
		t.Stop()
	}
	k.liveSync()
	return k.now >= limit
}

// DiscardPosts drops whatever is posted until done closes: the run is over
// and the broker's consumers are stopping, and none of them may block on a
// full inbox meanwhile.
func (k *Kernel) DiscardPosts(done <-chan struct{}) {
	for {
		select {
		case <-k.rt.inbox:
		case <-done:
			return
		}
	}
}

// AwaitOutside runs call, a call to a real server, on a goroutine of its
// own while the actor is parked and the others run: the answer takes wall
// time, in which the rest of a process (a lock's renewal, a heartbeat) goes
// on, as it would in production. A killed actor is reaped only once the
// call returned, and AwaitOutside does not exit for it: the caller records
// what the call did, then calls ExitIfDead. In a simulation it just calls
// call.
func (a *Actor) AwaitOutside(call func()) {
	k := a.k
	if k.rt == nil {
		call()
		return
	}
	if k.current != a {
		panic(fmt.Sprintf("sim: actor %s awaited outside without the baton", a.name))
	}
	a.runnable, a.outside = false, true
	go func() { // determinism-ok: live mode only
		call()
		k.Post(func() {
			a.outside, a.runnable = false, true
			k.reapDue = true
		})
	}()
	if !a.r.yield(struct{}{}) {
		panic(crash{}) // Shutdown stopped the runner
	}
}
