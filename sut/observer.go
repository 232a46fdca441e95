package sut

import "time"

// Observer turns what the simulator sees from outside (store keys, bus
// messages) into plain facts. It reads the store through a View, which
// neither yields nor faults.
type Observer interface {
	// JobKey reports the job a store key holds the state of.
	JobKey(key string) (jobID string, ok bool)
	// Scripts names the system's Lua scripts: name to the SHA1 of the
	// script's source (hex, as EVALSHA sends it; go-redis's Script.Hash).
	// A command that runs one carries its name in StoreCommand.Script.
	Scripts() map[string]string
	// Touched lists the job keys a write may have changed: those it names,
	// and those a script reaches through other keys.
	Touched(v View, c StoreCommand) []string
	// Job reads a job's facts from its key; it runs after every write to a
	// job, so it reads only what it needs.
	Job(v View, key string) JobFact
	// Message says what a bus message is about.
	Message(subject string, data []byte) MessageFact
	// Command says what a store command does: the simulator records locks,
	// scans, admission keys and transitions by it, and fault kinds aim at it.
	Command(c StoreCommand) CommandFact
	// DLQ is every dead-letter entry, by job id.
	DLQ(v View) map[string]DLQEntry
	// Locks are the locks held now.
	Locks(v View) []Lock
	// Admission is the run admission state; epoch is virtual time zero.
	Admission(v View, epoch time.Time) AdmissionState
	// DueRuns are the runs of org created at least d before now.
	DueRuns(v View, org string, now time.Time, d time.Duration) []string
}

// KeyspaceInvariants is an Observer that knows what its system's keys say
// of one another (a job is in the index its state implies, and in no other).
// After the simulated store forgets acknowledged writes, the restored
// keyspace is held to them: a contradiction is the simulator's defect, never
// the environment's.
type KeyspaceInvariants interface {
	// Inconsistencies lists, one line each, what in v contradicts itself.
	Inconsistencies(v View) []string
}

// View reads the store without going through a client.
type View interface {
	Keys() []string // sorted
	Get(key string) (string, bool)
	Hash(key string) (map[string]string, bool)
	Field(key, field string) string // one hash field, "" when absent
	Members(key string) []string
	ZScores(key string) map[string]float64
	TTL(key string) time.Duration
}

// StreamView is a View that also reads streams, their consumer groups and
// pending entries lists: what a system that hands jobs out through Redis
// Streams (XADD, XREADGROUP, XCLAIM, XACK) needs to tell which job a command
// on an entry ID is about. The simulated store's View is always one; an
// observer asks with a type assertion (v.(sut.StreamView)).
type StreamView interface {
	View
	// StreamEntry reads one entry of a stream by its ID.
	StreamEntry(key, id string) (StreamEntry, bool)
	// Stream reads a stream's entries, oldest first; none when key holds
	// no stream.
	Stream(key string) []StreamEntry
	// StreamGroups reads a stream's consumer groups, by name.
	StreamGroups(key string) []StreamGroup
}

// StreamEntry is one entry of a stream.
type StreamEntry struct {
	ID     string
	Values []string // field, value, field, value... as XADD sent them
}

// Field is the value of one of the entry's fields, "" when it has none.
func (e StreamEntry) Field(name string) string {
	for i := 0; i+1 < len(e.Values); i += 2 {
		if e.Values[i] == name {
			return e.Values[i+1]
		}
	}
	return ""
}

// StreamGroup is a consumer group of a stream.
type StreamGroup struct {
	Name string
	// LastDeliveredID is the last entry the group handed out with ">".
	LastDeliveredID string
	// Pending is the pending entries list, lowest ID first: delivered, not
	// yet acknowledged (its entry may have been deleted since).
	Pending []PendingEntry
	// Consumers are the group's consumers, by name.
	Consumers []string
}

// PendingEntry is one entry of a group's pending entries list.
type PendingEntry struct {
	ID, Consumer string
	// Deliveries is the delivery count XPENDING shows.
	Deliveries int
	// Idle is the time since its last delivery (or claim), by the store's
	// clock.
	Idle time.Duration
}

// JobFact is one job as its stored record says.
type JobFact struct {
	State    string
	Version  int64
	Attempts int
	Gen      int
	// DispatchID and ResultPtr are shown to engineers and compared with what
	// the executing worker reported.
	DispatchID, ResultPtr string
	// Cause is the last error code the system recorded for the job, if any.
	Cause string
}

// MessageFact is what a bus message is about. A dispatch is a message that
// asks a worker to run job JobID's generation Gen.
type MessageFact struct {
	JobID     string
	Gen       int
	Dispatch  bool
	Heartbeat bool
	// Cancel marks a client's request to cancel job JobID.
	Cancel bool
	// ResultPtr is where a worker's result message says the result is.
	ResultPtr string
}

// StoreCommand is one store command as the system sent it, already taken
// apart: a script's keys and arguments separate and the script named, so an
// observer never reads the wire layout of EVALSHA.
type StoreCommand struct {
	// Name is the command in lower case: "hset", "zrangebyscore", and for a
	// script "evalsha" or "eval", or "evalsha_ro" or "eval_ro" for one run
	// read-only.
	Name string
	// Script is the script's name from Observer.Scripts ("" for a plain
	// command, or for a script the system did not name).
	Script string
	// Keys are a script's KEYS; for a plain command, its first argument
	// (the key, for every command the engines here send).
	Keys []string
	// Args are a script's ARGV; for a plain command, the arguments after
	// the first.
	Args []string
}

// Key is the i-th key, "" when there is none.
func (c StoreCommand) Key(i int) string { return at(c.Keys, i) }

// Arg is the i-th argument, "" when there is none.
func (c StoreCommand) Arg(i int) string { return at(c.Args, i) }

// Named lists the keys and arguments that match, keys first, in the order
// sent: the job keys a write names, for Observer.Touched.
func (c StoreCommand) Named(match func(string) bool) []string {
	var out []string
	for _, list := range [][]string{c.Keys, c.Args} {
		for _, s := range list {
			if match(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// IsScript reports whether the command runs the named script.
func (c StoreCommand) IsScript(name string) bool { return c.Script != "" && c.Script == name }

func at(list []string, i int) string {
	if i < 0 || i >= len(list) {
		return ""
	}
	return list[i]
}

// CommandFact is what a store command does to a job: a transition from From
// ("" any) to To, or a read of a job.
type CommandFact struct {
	JobID      string
	From, To   string
	Transition bool
	// Token is the lock token the write carries, if any.
	Token string
	// LockKey is set for a command on job JobID's lock (take, renew,
	// release) under Token: the simulator reads the key after it to learn
	// who holds the lock, and until when in true time.
	LockKey string
	// LockOp is what the lock command does: LockTake, LockRenew or LockRelease.
	LockOp LockOp
	// Admission marks commands on run admission's state; Reserve those that
	// bind an idempotency key to a new run.
	Admission, Reserve bool
	// Scan names the state whose jobs the command lists for a sweep (the
	// reconciler's or the replayer's scan of stale jobs), "" for none.
	Scan string
	// RunKey is the idempotency key (as clients send it) whose stored value
	// a write may change: a reservation (Reserve), the cleanup of one after
	// a refused start (Release), the sweeper's removal of a stale one
	// (Sweep), or any other write (another writer's value). The simulator
	// records each such command with the key's value before and after it.
	RunKey         string
	Release, Sweep bool
	// RunsOf is the org whose runs a command may create or finish: the
	// simulator counts the org's active runs (DueRuns) after it.
	RunsOf string
}

// DLQEntry is a dead-letter record.
type DLQEntry struct {
	JobID, Reason, ReasonCode string
	Status, LastState         string
	Attempts                  int
	RetriesExhausted          bool
}

// Lock is a held lock.
type Lock struct {
	Key, Token string
	TTL        time.Duration
}

// AdmissionState is the run admission state left in the store.
type AdmissionState struct {
	// Keys maps each idempotency key to its stored value.
	Keys map[string]string
	// Reserved is when each run-less reservation was made, in virtual time.
	Reserved map[string]time.Duration
	// Runs maps each run id to its stored record.
	Runs map[string]map[string]string
	// StaleAfter is when a reservation counts as abandoned (Admission.StaleReservationAfter).
	StaleAfter time.Duration
	// Workflows maps each registered workflow to the org it belongs to.
	Workflows map[string]string
}

// LockOp is a command on a job's lock.
type LockOp string

// The lock commands.
const (
	LockTake    LockOp = "take"
	LockRenew   LockOp = "renew"
	LockRelease LockOp = "release"
)
