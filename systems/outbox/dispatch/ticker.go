package dispatch

import (
	"context"
	"sync"
	"time"
)

// every returns the loop body of a periodic task: run tick, log a failure.
func (d *Dispatcher) every(name string, tick func(context.Context) error) func(context.Context) {
	return func(ctx context.Context) {
		if err := tick(ctx); err != nil {
			d.log.Warn(name+" tick failed", "error", err)
		}
	}
}

// Start schedules the relay, the reconciler and the replayer on the clock,
// each rescheduling itself after its tick, until stop is called. Each tick
// runs in the context the clock hands it (its own activity in a simulator).
func (d *Dispatcher) Start() (stop func()) {
	relay := func(ctx context.Context) error { _, err := d.RelayOnce(ctx); return err }
	tickers := []*ticker{
		newTicker(d.clock, d.cfg.RelayInterval, d.every("relay", relay)),
		newTicker(d.clock, d.cfg.ReconcileInterval, d.every("reconcile", d.ReconcileOnce)),
		newTicker(d.clock, d.cfg.ReplayInterval, d.every("replay", d.ReplayPendingOnce)),
	}
	for _, t := range tickers {
		t.start()
	}
	return func() {
		for _, t := range tickers {
			t.stop()
		}
	}
}

// ticker runs fn every interval through Clock.AfterFunc: the next tick is
// scheduled when the previous one ends, so ticks of one task never overlap.
type ticker struct {
	clock    Clock
	interval time.Duration
	fn       func(context.Context)
	state    tickerState
}

func newTicker(clock Clock, interval time.Duration, fn func(context.Context)) *ticker {
	return &ticker{clock: clock, interval: interval, fn: fn}
}

// tickerState guards a ticker's pending timer; stop may come from any
// goroutine (a production shutdown) while a tick runs.
type tickerState struct {
	mu      sync.Mutex
	timer   Timer
	stopped bool
}

func (t *ticker) start() {
	t.state.mu.Lock()
	defer t.state.mu.Unlock()
	if !t.state.stopped {
		t.state.timer = t.clock.AfterFunc(t.interval, t.fire)
	}
}

func (t *ticker) fire(ctx context.Context) {
	t.state.mu.Lock()
	stopped := t.state.stopped
	t.state.mu.Unlock()
	if stopped {
		return
	}
	t.fn(ctx)
	t.start()
}

func (t *ticker) stop() {
	t.state.mu.Lock()
	defer t.state.mu.Unlock()
	t.state.stopped = true
	if t.state.timer != nil {
		t.state.timer.Stop()
	}
}
