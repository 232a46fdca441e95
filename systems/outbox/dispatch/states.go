package dispatch

// JobState is a job's lifecycle state as stored in Redis. The names and the
// terminal set are engine/'s, so one workload and one checker read both.
type JobState string

// The job states.
const (
	StatePending    JobState = "PENDING"
	StateScheduled  JobState = "SCHEDULED"
	StateDispatched JobState = "DISPATCHED"
	StateRunning    JobState = "RUNNING"
	StateRetrying   JobState = "RETRYING"
	StateSucceeded  JobState = "SUCCEEDED"
	StateFailed     JobState = "FAILED"
	StateCancelled  JobState = "CANCELLED"
	StateTimeout    JobState = "TIMEOUT"
	StateDenied     JobState = "DENIED"
)

// AllStates lists every state, terminal ones last.
var AllStates = []JobState{
	StatePending, StateScheduled, StateDispatched, StateRunning, StateRetrying,
	StateSucceeded, StateFailed, StateCancelled, StateTimeout, StateDenied,
}

// Terminal reports whether nothing may ever move a job out of s.
func (s JobState) Terminal() bool {
	switch s {
	case StateSucceeded, StateFailed, StateCancelled, StateTimeout, StateDenied:
		return true
	}
	return false
}

// allowedTransitions is the store-level transition table; the Lua scripts are
// generated from it. "" is a job that does not exist yet. Terminal states
// allow nothing.
//
// Unlike engine/ there is no DISPATCHED -> SCHEDULED: a failed publish is the
// relay's to retry, so no state is ever rolled back. The request handler's
// script takes PENDING/SCHEDULED/RETRYING -> SCHEDULED -> DISPATCHED in one
// atomic step; an observer of committed states sees the two as one change.
var allowedTransitions = map[JobState][]JobState{
	"":              {StatePending, StateCancelled, StateFailed},
	StatePending:    {StateScheduled, StateFailed, StateCancelled, StateDenied},
	StateScheduled:  {StateScheduled, StateDispatched, StateFailed, StateCancelled, StateDenied},
	StateDispatched: {StateRunning, StateSucceeded, StateFailed, StateRetrying, StateCancelled, StateTimeout},
	StateRunning:    {StateSucceeded, StateFailed, StateRetrying, StateCancelled, StateTimeout},
	StateRetrying:   {StateScheduled, StateFailed, StateCancelled},
}

// TransitionAllowed reports whether the store accepts from -> to.
func TransitionAllowed(from, to JobState) bool {
	for _, s := range allowedTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}
