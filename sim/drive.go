package sim

import "time"

// Driver drives a started world step by step, as a property-based test does:
// between calls to Advance it starts clients and crashes processes itself.
// Every call takes effect at the current virtual time, on the kernel's
// schedule. A driver ends its world with Finish, or Abort when it gives up.
type Driver struct {
	w *World
	// err is a panic the start raised: every Advance returns it, and
	// Finish reports it as the run's error.
	err error
}

// Drive boots the world (the injector's setup, the replicas, the workers and
// the planned workload, if any) and hands it to a driver. Nothing runs until
// Advance or Finish.
func (w *World) Drive() *Driver {
	return &Driver{w: w, err: w.guard(w.start)}
}

// Advance runs the fault phase on for dt of virtual time.
func (d *Driver) Advance(dt time.Duration) error {
	if d.err != nil {
		return d.err
	}
	return d.w.advance(dt)
}

// Finish ends the fault phase now, heals and drains, and returns the result.
func (d *Driver) Finish() *Result { return d.w.finish(d.err) }

// Abort stops a world that will not be finished (a driver that failed
// midway) and frees its actors and store.
func (d *Driver) Abort() { d.w.abort() }

// Now is the current virtual time.
func (d *Driver) Now() time.Duration { return d.w.k.Now() }

// History is the ground truth recorded so far.
func (d *Driver) History() *History { return d.w.hist }

// Submit has a new client submit a job on topic now; it returns the job id.
func (d *Driver) Submit(topic string) string { return d.w.clients.Submit(topic) }

// ReadStatus has a new client read a job's state now.
func (d *Driver) ReadStatus(jobID string) { d.w.clients.ReadStatus(jobID) }

// Cancel has a new client cancel a job now.
func (d *Driver) Cancel(jobID string) { d.w.clients.Cancel(jobID) }

// StartRun has a new client start a workflow run with an idempotency key now,
// retrying as the planned run clients do. The first call registers the
// workflow and starts the workflow engine and the sweeper.
func (d *Driver) StartRun(key string) { d.w.clients.StartRun(key) }

// Replicas counts the scheduler replicas.
func (d *Driver) Replicas() int { return len(d.w.replicas) }

// CrashReplica takes replica i (0-based) down now and restarts it after the
// configured delay. Its in-flight messages come back after the ack wait. The
// crash goes into the history as an operator's kill, so the checkers see
// why the replica's sections stopped where they did.
func (d *Driver) CrashReplica(i int) {
	w := d.w
	if w.k.Group(w.replicas[i].name).Crashed() {
		return
	}
	w.record(Event{At: w.k.Now(), Replica: i + 1, Action: EventKill}, w.replicas[i].name)
	w.crashReplica(i)
}

// PauseReplica stops replica i from running for dt of virtual time, recorded
// in the history as an operator's pause.
func (d *Driver) PauseReplica(i int, dt time.Duration) {
	d.w.record(Event{At: d.w.k.Now(), Replica: i + 1, Action: EventPause, For: dt}, d.w.replicas[i].name)
	d.w.pauseReplica(i, dt)
}

// Workers counts the workers.
func (d *Driver) Workers() int { return d.w.workers.Len() }

// CrashWorker takes worker i (0-based) down now; it restarts after its delay.
// The crash goes into the history like a fault's, so the checkers know the
// worker came back with its in-memory de-duplication empty.
func (d *Driver) CrashWorker(i int) { d.w.workers.Crash(i) }

// abort stops a started world and frees its actors and store.
func (w *World) abort() {
	if w.stopWatch != nil {
		w.stopWatch()
	}
	w.k.Shutdown()
	w.closeLive()
	w.store.Close()
}
