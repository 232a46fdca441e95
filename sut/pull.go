package sut

import (
	"context"
	"time"
)

// Puller is optional for a WorkerProtocol: the system's workers pull their
// work from the store (a Redis Streams consumer group read with XREADGROUP,
// a list popped with LMOVE) instead of receiving dispatches over the bus.
// A worker whose protocol has it runs a pull loop of its own on the
// simulator's schedule and subscribes to no dispatch subject; each pulled
// dispatch takes the path a delivered one takes (the execution recorded,
// the worker's fault points, its result reported with Result), and once its
// result is sent the worker acknowledges it with Done.
type Puller interface {
	// Puller starts one worker process's side of the pull, on the worker's
	// own ports (its store client, clock, random source). It is called again
	// after every restart of the worker: what it keeps in memory is lost in a
	// crash, what it wrote to the store is not.
	Puller(p Ports, w PullWorker) (Pull, error)
}

// PullWorker is the worker a Pull serves.
type PullWorker struct {
	ID, Pool string
	// MaxParallel is how many dispatches the worker runs at once.
	MaxParallel int
}

// Pull is one worker process's pull from the store.
type Pull interface {
	// Next takes up to max dispatches for the worker to run now; none when
	// there is nothing to run. An error means the pull's outcome is unknown:
	// what it took stays pending in the store, for the system's visibility
	// timeout to give to another worker.
	Next(ctx context.Context, max int) ([]Dispatch, error)
	// Done acknowledges a dispatch Next returned, once its result was sent.
	// A dispatch never acknowledged (the worker crashed, Done failed) stays
	// pending in the store.
	Done(ctx context.Context, d Dispatch) error
	// Idle is how long the worker waits before it pulls again after a pull
	// that found nothing or failed.
	Idle() time.Duration
}
