package sim

import "time"

// Driving a world step by step: between calls to Advance, a driver (a
// property-based test) starts clients and crashes processes itself. Every
// call takes effect at the current virtual time, on the kernel's schedule.

// Now is the current virtual time.
func (w *World) Now() time.Duration { return w.k.Now() }

// Submit has a new client submit a job on topic now; it returns the job id.
func (w *World) Submit(topic string) string { return w.clients.Submit(topic) }

// ReadStatus has a new client read a job's state now.
func (w *World) ReadStatus(jobID string) { w.clients.ReadStatus(jobID) }

// Cancel has a new client cancel a job now.
func (w *World) Cancel(jobID string) { w.clients.Cancel(jobID) }

// StartRun has a new client start a workflow run with an idempotency key now.
func (w *World) StartRun(key string) { w.clients.StartRun(key) }

// Workers counts the workers.
func (w *World) Workers() int { return w.workers.Len() }

// CrashWorker takes worker i (0-based) down now; it restarts after its delay.
func (w *World) CrashWorker(i int) { w.workers.Crash(i) }

// Abort stops a started world that will not be finished (a driver that
// failed midway) and frees its actors and store.
func (w *World) Abort() {
	w.stopWatch()
	w.k.Shutdown()
	w.store.Close()
}
