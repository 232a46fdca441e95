package model

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
)

// The engine's states and graph, which these stories are written against.
const (
	StatePending    = string(engine.StatePending)
	StateScheduled  = string(engine.StateScheduled)
	StateDispatched = string(engine.StateDispatched)
	StateRunning    = string(engine.StateRunning)
	StateRetrying   = string(engine.StateRetrying)
	StateSucceeded  = string(engine.StateSucceeded)
	StateFailed     = string(engine.StateFailed)
	StateCancelled  = string(engine.StateCancelled)
	StateTimeout    = string(engine.StateTimeout)
)

func engineAllows(from, to string) bool {
	return engine.TransitionAllowed(engine.JobState(from), engine.JobState(to))
}

var engineLifecycle = JobLifecycle(engineAllows)

// A commit steps exactly where the graph it is given allows.
func TestCommitFollowsTheGivenGraph(t *testing.T) {
	all := append([]engine.JobState{""}, engine.AllStates...)
	step := stepJobUnder(engineAllows)
	for _, from := range all {
		for _, to := range all {
			op := CommitOp(0, 1, "j", string(from), string(to))
			ok, _ := step(string(from), op.Input, op.Output)
			require.Equal(t, engineAllows(string(from), string(to)), ok, "step commit %q→%q", from, to)
		}
	}
}

func TestJobDescribe(t *testing.T) {
	ops := []struct {
		op   porcupine.Operation
		want string
	}{
		{CommitOp(0, 1, "j", StatePending, StateScheduled), "commit PENDING→SCHEDULED"},
		{CommitOp(0, 1, "j", "", StatePending), "commit (none)→PENDING"},
		{ReadOp(1, 1, 2, "j", StateRunning), "read → RUNNING"},
		{ReadOp(1, 1, 2, "j", ""), "read → (not found)"},
		{ReadUnknownOp(1, 1, "j"), "read → ? (unknown)"},
		{SubmitOp(1, 1, 2, "j"), "submit"},
		{CancelOp(1, 1, 2, "j"), "cancel"},
	}
	for _, c := range ops {
		require.Equal(t, c.want, engineLifecycle.DescribeOperation(c.op.Input, c.op.Output))
	}
	require.Equal(t, "(none)", engineLifecycle.DescribeState(""))
	require.Equal(t, "RUNNING", engineLifecycle.DescribeState(StateRunning))
}

func TestJobConstructorsEncodeUnknownAsInfinity(t *testing.T) {
	op := ReadUnknownOp(3, 42, "j")
	require.Equal(t, int64(42), op.Call)
	require.Equal(t, Infinity, op.Return)
	require.Equal(t, JobOutput{Err: true}, op.Output)

	c := CommitOp(0, 7, "j", StatePending, StateScheduled)
	require.Equal(t, c.Call, c.Return, "a commit is instantaneous")
}

// toRunning commits job j from nothing to RUNNING at t = 10, 20, 30, 40.
func toRunning(j string) []porcupine.Operation {
	return []porcupine.Operation{
		CommitOp(0, 10, j, "", StatePending),
		CommitOp(0, 20, j, StatePending, StateScheduled),
		CommitOp(0, 30, j, StateScheduled, StateDispatched),
		CommitOp(0, 40, j, StateDispatched, StateRunning),
	}
}

func history(parts ...[]porcupine.Operation) []porcupine.Operation {
	var h []porcupine.Operation
	for _, p := range parts {
		h = append(h, p...)
	}
	return h
}

func TestJobLifecycleLegal(t *testing.T) {
	cases := map[string][]porcupine.Operation{
		"happy path with reads": history(toRunning("j"), []porcupine.Operation{
			SubmitOp(1, 5, 6, "j"),
			ReadOp(1, 7, 8, "j", ""),
			ReadOp(1, 21, 22, "j", StateScheduled),
			CommitOp(0, 50, "j", StateRunning, StateSucceeded),
			ReadOp(1, 51, 52, "j", StateSucceeded),
		}),
		// A read spanning a commit may see either side of it.
		"read concurrent with commit sees old": history(toRunning("j"), []porcupine.Operation{
			ReadOp(1, 35, 45, "j", StateDispatched),
		}),
		"read concurrent with commit sees new": history(toRunning("j"), []porcupine.Operation{
			ReadOp(1, 35, 45, "j", StateRunning),
		}),
		// Closed intervals: a read returning at the commit's instant is concurrent.
		"read returning at commit time": history(toRunning("j"), []porcupine.Operation{
			ReadOp(1, 38, 40, "j", StateDispatched),
		}),
		"concurrent reads in either order": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateRunning, StateSucceeded),
			ReadOp(1, 45, 55, "j", StateSucceeded),
			ReadOp(2, 46, 54, "j", StateRunning),
		}),
		"unknown read anywhere": history(toRunning("j"), []porcupine.Operation{
			ReadUnknownOp(1, 5, "j"),
			ReadUnknownOp(2, 45, "j"),
		}),
		"submit and cancel constrain nothing": history(toRunning("j"), []porcupine.Operation{
			SubmitOp(1, 1, 2, "j"),
			CancelOp(1, 3, Infinity, "j"),
			CommitOp(0, 50, "j", StateRunning, StateCancelled),
			SubmitOp(2, 60, 61, "j"),
		}),
		"retry then success": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateRunning, StateRetrying),
			CommitOp(0, 60, "j", StateRetrying, StateScheduled),
			CommitOp(0, 70, "j", StateScheduled, StateSucceeded),
			ReadOp(1, 71, 72, "j", StateSucceeded),
		}),
		// Unpartitioned, b's commit from "" would meet a's PENDING.
		"jobs are independent": history(toRunning("a"), toRunning("b"), []porcupine.Operation{
			ReadOp(1, 41, 42, "a", StateRunning),
			ReadOp(1, 41, 42, "c", ""),
		}),
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			require.True(t, porcupine.CheckOperations(engineLifecycle, h))
		})
	}
}

func TestJobLifecycleIllegal(t *testing.T) {
	cases := map[string][]porcupine.Operation{
		"read RUNNING after read SUCCEEDED": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateRunning, StateSucceeded),
			ReadOp(1, 45, 55, "j", StateSucceeded),
			ReadOp(2, 56, 57, "j", StateRunning),
		}),
		"resurrection SUCCEEDED→PENDING": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateRunning, StateSucceeded),
			CommitOp(0, 60, "j", StateSucceeded, StatePending),
		}),
		"stale read": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateRunning, StateSucceeded),
			ReadOp(1, 51, 52, "j", StateRunning),
		}),
		"commit from a state the job is not in": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateScheduled, StateDispatched),
		}),
		"transition outside the graph": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", StateRunning, StatePending),
		}),
		"created twice": history(toRunning("j"), []porcupine.Operation{
			CommitOp(0, 50, "j", "", StatePending),
		}),
		"read of a state never committed": history(toRunning("j"), []porcupine.Operation{
			ReadOp(1, 41, 42, "j", StateRetrying),
		}),
		"not found after creation": history(toRunning("j"), []porcupine.Operation{
			ReadOp(1, 11, 12, "j", ""),
		}),
		"violation in one job among many": history(toRunning("a"), toRunning("b"), []porcupine.Operation{
			ReadOp(1, 41, 42, "a", StateRunning),
			ReadOp(1, 41, 42, "b", StatePending),
		}),
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			require.False(t, porcupine.CheckOperations(engineLifecycle, h))
			res, _ := porcupine.CheckOperationsVerbose(engineLifecycle, h, 0)
			require.Equal(t, porcupine.Illegal, res)
		})
	}
}

// The brief's stale read, by timestamps: commit at 10, read [20, 21] of the old
// state. The same read started before the commit is fine.
func TestJobStaleReadDependsOnTiming(t *testing.T) {
	base := []porcupine.Operation{
		CommitOp(0, 5, "j", "", StatePending),
		CommitOp(0, 10, "j", StatePending, StateScheduled),
	}
	stale := history(base, []porcupine.Operation{ReadOp(1, 20, 21, "j", StatePending)})
	concurrent := history(base, []porcupine.Operation{ReadOp(1, 9, 21, "j", StatePending)})
	require.False(t, porcupine.CheckOperations(engineLifecycle, stale))
	require.True(t, porcupine.CheckOperations(engineLifecycle, concurrent))
}

func TestPartitionByJob(t *testing.T) {
	h := []porcupine.Operation{
		ReadOp(0, 1, 2, "b", ""),
		ReadOp(0, 3, 4, "a", ""),
		ReadOp(0, 5, 6, "b", ""),
	}
	parts := PartitionByJob(h)
	require.Equal(t, [][]porcupine.Operation{{h[0], h[2]}, {h[1]}}, parts)
}

// events turns operations into an event history ordered by time, calls first.
func events(h []porcupine.Operation) []porcupine.Event {
	type ev struct {
		t    int64
		call bool
		e    porcupine.Event
	}
	var evs []ev
	for i, op := range h {
		evs = append(evs,
			ev{op.Call, true, porcupine.Event{ClientId: op.ClientId, Kind: porcupine.CallEvent, Value: op.Input, Id: i}},
			ev{op.Return, false, porcupine.Event{ClientId: op.ClientId, Kind: porcupine.ReturnEvent, Value: op.Output, Id: i}})
	}
	for i := 1; i < len(evs); i++ { // insertion sort: stable and tiny
		for j := i; j > 0 && (evs[j].t < evs[j-1].t || evs[j].t == evs[j-1].t && evs[j].call && !evs[j-1].call); j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	out := make([]porcupine.Event, len(evs))
	for i, e := range evs {
		out[i] = e.e
	}
	return out
}

func TestJobLifecycleEvents(t *testing.T) {
	h := history(toRunning("a"), toRunning("b"))
	require.True(t, porcupine.CheckEvents(engineLifecycle, events(h)))

	unpartitioned := engineLifecycle
	unpartitioned.PartitionEvent = nil
	require.False(t, porcupine.CheckEvents(unpartitioned, events(h)), "the partition is what makes jobs independent")

	bad := history(h, []porcupine.Operation{CommitOp(0, 50, "b", StateRunning, StateSucceeded), ReadOp(1, 51, 52, "b", StateRunning)})
	require.False(t, porcupine.CheckEvents(engineLifecycle, events(bad)))
}
