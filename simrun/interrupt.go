package simrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// interruptGrace bounds how long an interrupted run waits for a seed that
// cannot be stopped (one running in this process) before it writes what it
// has and exits.
const interruptGrace = 5 * time.Second

// interrupts turns SIGINT and SIGTERM into an orderly stop: no more seeds,
// workers killed and waited for, then summary.json and index.html with the
// verdict interrupted. A second SIGINT exits at once.
type interrupts struct {
	ctx     context.Context // done at the first signal
	cancel  context.CancelFunc
	abandon chan struct{} // closed interruptGrace after the first signal
	sigs    chan os.Signal
	quit    chan struct{}
	stderr  io.Writer
	workers []worker

	mu  sync.Mutex
	got os.Signal
}

func watchInterrupts(stderr io.Writer, workers []worker) *interrupts {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{ctx: ctx, cancel: cancel, abandon: make(chan struct{}), sigs: make(chan os.Signal, 2),
		quit: make(chan struct{}), stderr: stderr, workers: workers}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go in.watch()
	return in
}

func (in *interrupts) watch() {
	for {
		select {
		case <-in.quit:
			return
		case s := <-in.sigs:
			in.mu.Lock()
			first := in.got == nil
			if first {
				in.got = s
			}
			in.mu.Unlock()
			if !first {
				if s == os.Interrupt {
					fmt.Fprintln(in.stderr, "simrun: interrupted again: exiting now, without a summary")
					os.Exit(130)
				}
				continue
			}
			fmt.Fprintf(in.stderr, "simrun: %s: stopping the workers and writing what ran so far (Ctrl-C again exits at once)\n",
				signalName(s))
			in.cancel()
			for _, w := range in.workers {
				w.stop()
			}
			time.AfterFunc(interruptGrace, func() { close(in.abandon) }) // determinism-ok: the CLI's own grace period
		}
	}
}

func (in *interrupts) interrupted() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.got != nil
}

// signal names the signal that stopped the run: SIGINT or SIGTERM.
func (in *interrupts) signal() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return signalName(in.got)
}

func signalName(s os.Signal) string {
	if s == os.Interrupt {
		return "SIGINT"
	}
	return "SIGTERM"
}

// settle ends the workers: after an interrupt each killed process is waited
// for and an in-process worker is sealed, so nothing is written once the
// summary is; otherwise each finishes and exits.
func (in *interrupts) settle(workers []worker) {
	for _, w := range workers {
		if lw, ok := w.(localWorker); ok && in.interrupted() {
			lw.seal()
			continue
		}
		_ = w.close()
	}
}

// release stops watching; a later signal has its default effect.
func (in *interrupts) release() {
	signal.Stop(in.sigs)
	close(in.quit)
}
