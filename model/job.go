package model

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// JobOpKind names a job lifecycle operation.
type JobOpKind string

// The job lifecycle operations.
const (
	JobCommit JobOpKind = "commit" // a state change committed in the store
	JobRead   JobOpKind = "read"   // a client's status read
	JobSubmit JobOpKind = "submit" // asynchronous through the bus: constrains nothing
	JobCancel JobOpKind = "cancel" // asynchronous through the bus: constrains nothing
)

// JobInput is the input of every job lifecycle operation.
type JobInput struct {
	Op   JobOpKind
	Job  string // partition key
	From string // commit only; "" is "job does not exist yet"
	To   string // commit only
}

// JobOutput is the output of a read; other operations carry the zero value.
type JobOutput struct {
	State string // "" is "not found"
	Err   bool   // the read failed: its outcome is unknown
}

// CommitOp is a committed store transition. It is ground truth observed by the
// simulator, so it is instantaneous: Call == Return == at.
func CommitOp(client int, at int64, job, from, to string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    JobInput{Op: JobCommit, Job: job, From: from, To: to},
		Call:     at,
		Output:   JobOutput{},
		Return:   at,
	}
}

// ReadOp is a status read that returned state ("" for not found).
func ReadOp(client int, call, ret int64, job, state string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    JobInput{Op: JobRead, Job: job},
		Call:     call,
		Output:   JobOutput{State: state},
		Return:   ret,
	}
}

// ReadUnknownOp is a status read that failed; it returns at Infinity.
func ReadUnknownOp(client int, call int64, job string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    JobInput{Op: JobRead, Job: job},
		Call:     call,
		Output:   JobOutput{Err: true},
		Return:   Infinity,
	}
}

// SubmitOp is a submit request. Pass ret = Infinity for a lost reply; it
// constrains nothing either way.
func SubmitOp(client int, call, ret int64, job string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    JobInput{Op: JobSubmit, Job: job},
		Call:     call,
		Output:   JobOutput{},
		Return:   ret,
	}
}

// CancelOp is a cancel request; like SubmitOp it constrains nothing.
func CancelOp(client int, call, ret int64, job string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    JobInput{Op: JobCancel, Job: job},
		Call:     call,
		Output:   JobOutput{},
		Return:   ret,
	}
}

func jobOf(input any) string { return input.(JobInput).Job }

// PartitionByJob splits a history into one partition per job id, in order of
// first appearance.
func PartitionByJob(history []porcupine.Operation) [][]porcupine.Operation {
	return partitionBy(history, jobOf)
}

// PartitionEventsByJob is PartitionByJob for event histories.
func PartitionEventsByJob(history []porcupine.Event) [][]porcupine.Event {
	return partitionEventsBy(history, jobOf)
}

// stepJobUnder is the sequential specification of one job over a system's
// transition graph. The state is the job's committed state as a string, ""
// before it exists.
func stepJobUnder(allowed func(from, to string) bool) func(state, input, output any) (bool, any) {
	return func(state, input, output any) (bool, any) { return stepJobWith(allowed, state, input, output) }
}

func stepJobWith(allowed func(from, to string) bool, state, input, output any) (bool, any) {
	st := state.(string)
	in := input.(JobInput)
	switch in.Op {
	case JobCommit:
		if st != in.From || !allowed(in.From, in.To) {
			return false, st
		}
		return true, in.To
	case JobRead:
		out := output.(JobOutput)
		return out.Err || out.State == st, st
	case JobSubmit, JobCancel:
		return true, st
	}
	panic(fmt.Sprintf("model: unknown job operation %q", in.Op))
}

func describeJobState(state any) string {
	if s := state.(string); s != "" {
		return s
	}
	return "(none)"
}

func describeJobOperation(input, output any) string {
	in := input.(JobInput)
	switch in.Op {
	case JobCommit:
		return fmt.Sprintf("commit %s→%s", describeJobState(in.From), describeJobState(in.To))
	case JobRead:
		out, _ := output.(JobOutput)
		switch {
		case out.Err:
			return "read → ? (unknown)"
		case out.State == "":
			return "read → (not found)"
		}
		return "read → " + out.State
	}
	return string(in.Op)
}

// JobLifecycle is the job lifecycle as clients and the store see it: commits
// move the state along the system's transition graph (allowed, which its spec
// gives; a terminal state should allow nothing), reads must return the
// current state, submits and cancels act later through the bus and constrain
// nothing.
func JobLifecycle(allowed func(from, to string) bool) porcupine.Model {
	return porcupine.Model{
		Partition:         PartitionByJob,
		PartitionEvent:    PartitionEventsByJob,
		Init:              func() any { return "" },
		Step:              stepJobUnder(allowed),
		DescribeOperation: describeJobOperation,
		DescribeState:     describeJobState,
	}
}
