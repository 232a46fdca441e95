package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
)

// Driving a world step by step: between calls to Advance, a driver (a
// property-based test) starts clients and crashes processes itself. Every
// call takes effect at the current virtual time, on the kernel's schedule.

// Now is the current virtual time.
func (w *World) Now() time.Duration { return w.k.Now() }

// nextClient numbers a driver's client after every planned one.
func (w *World) nextClient() int {
	wl := w.cfg.Workload
	w.scriptedClients++
	return wl.Jobs + wl.StatusReads + wl.Runs + w.scriptedClients
}

// Submit has a new client submit a job on topic now; it returns the job id.
func (w *World) Submit(topic string) string {
	client := w.nextClient()
	id := fmt.Sprintf("x-%d", client)
	req := sut.Job{ID: id, Topic: topic}
	if topic == "gpu" {
		req.Requires = []string{"gpu"}
	}
	w.clientsPending++
	w.k.Spawn("clients", "submit-"+id, func(ctx context.Context) { w.submit(ctx, client, req) })
	return id
}

// ReadStatus has a new client read a job's state now.
func (w *World) ReadStatus(jobID string) {
	client := w.nextClient()
	w.clientsPending++
	w.k.Spawn("clients", fmt.Sprintf("status-%d", client), func(ctx context.Context) { w.status(ctx, client, jobID) })
}

// Cancel has a new client cancel a job now.
func (w *World) Cancel(jobID string) {
	client := w.nextClient()
	w.clientsPending++
	w.k.Spawn("clients", fmt.Sprintf("cancel-%d", client), func(ctx context.Context) { w.cancel(ctx, client, jobID) })
}

// StartRun has a new client start a workflow run with an idempotency key now,
// retrying as the planned run clients do. The first call registers the
// workflow and starts the workflow engine and the sweeper.
func (w *World) StartRun(key string) {
	if w.admit == nil {
		return // the system has no run admission
	}
	w.bootAdmission()
	client := w.nextClient()
	rng := w.seeds.Child(fmt.Sprintf("run-client-%d", client))
	w.clientsPending++
	w.k.Spawn("clients", fmt.Sprintf("start-run-%d", client), func(ctx context.Context) {
		w.startRun(ctx, client, client, key, rng)
	})
}

// Workers counts the workers.
func (w *World) Workers() int { return w.workers.Len() }

// CrashWorker takes worker i (0-based) down now; it restarts after its delay.
// The crash goes into the history like a fault's, so the checkers know the
// worker came back with its in-memory de-duplication empty.
func (w *World) CrashWorker(i int) { w.workers.Crash(i) }

// Abort stops a started world that will not be finished (a driver that
// failed midway) and frees its actors and store.
func (w *World) Abort() {
	w.stopWatch()
	w.k.Shutdown()
	w.store.Close()
}
