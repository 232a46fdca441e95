package history

import "time"

// Run admission operations besides OpStartRun.
const (
	// OpRegisterWorkflow binds workflow Key to org Input; Output is one of
	// the RegisterReply values.
	OpRegisterWorkflow OpKind = "register_workflow"
	// OpSweep is one call of the gateway's sweeper of stale reservations;
	// Output is the count it reported removed, Unknown an error.
	OpSweep OpKind = "sweep_reservations"
	// OpCompleteRun is the workflow engine finishing run Key of org Org;
	// Output is "ok", or "error" (Unknown).
	OpCompleteRun OpKind = "complete_run"
	// OpSetRunLimit sets org Key's max concurrent runs to Input (<= 0: no
	// limit); Output is "ok", or "error" (Unknown).
	OpSetRunLimit OpKind = "set_run_limit"
	// OpPlantRunKey stores value Input under idempotency key Key as another
	// writer did (sut.ForeignRunKeys); Output is "ok", or "error" (Unknown).
	OpPlantRunKey OpKind = "plant_run_key"
)

// Outputs of the operations that only succeed or fail.
const (
	OpOK    = "ok"
	OpError = "error"
)

// Replies to a workflow registration.
const (
	RegisterOK       = "ok"
	RegisterConflict = "conflict" // another org holds the workflow
	RegisterInvalid  = "invalid"  // an empty org or workflow id
	RegisterError    = "error"    // anything else: outcome unknown
)

// RunKeyOp names a run admission command on an idempotency key's value.
type RunKeyOp string

// The commands on a key's value the simulator records.
const (
	RunKeyReserve RunKeyOp = "reserve" // a reservation, or the takeover of a stale one
	RunKeyRelease RunKeyOp = "release" // the cleanup of a reservation after a refused start
	RunKeySweep   RunKeyOp = "sweep"   // the sweeper's removal of a stale reservation
	RunKeyWrite   RunKeyOp = "write"   // any other write: another writer's value
)

// RunKeyCommand is one command on an idempotency key's stored value, as the
// store saw it: the value before and after it (""  for none), read from the
// store itself. A command whose caller died at it (a crash) is recorded with
// Returned false; Failed is an error its caller got (an injected fault,
// applied or not: Before and After tell).
type RunKeyCommand struct {
	Step  uint64
	Time  time.Duration
	Sent  time.Duration // when it was issued: a fault may have delayed it
	Actor string
	Key   string
	Op    RunKeyOp
	// Before and After are the key's value around the command.
	Before, After string
	Returned      bool
	Failed        bool
}

// Removed reports whether the command deleted the key's value.
func (c RunKeyCommand) Removed() bool { return c.Before != "" && c.After == "" }

// Replaced reports whether the command put a new value in place of another.
func (c RunKeyCommand) Replaced() bool { return c.Before != "" && c.After != "" && c.After != c.Before }

// Wrote reports whether the command stored a new value under the key.
func (c RunKeyCommand) Wrote() bool { return c.After != "" && c.After != c.Before }

// RunCount is how many runs of an org were active right after a command
// that created or finished one, as the store held them.
type RunCount struct {
	Step   uint64
	Time   time.Duration
	Actor  string
	Org    string
	Active int
}
