package engine

// JobState is a job's lifecycle state as stored in Redis.
type JobState string

// The job states. Approval and output quarantine are out of scope.
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

// allowedTransitions is the store-level transition table. The Lua transition
// script is generated from it, so the store and this table cannot disagree.
// "" is a job that does not exist yet. Terminal states allow nothing.
var allowedTransitions = map[JobState][]JobState{
	"":           {StatePending, StateCancelled, StateFailed},
	StatePending: {StateScheduled, StateFailed, StateCancelled, StateDenied},
	// A result may land on SCHEDULED: an ambiguous publish (stored by the broker,
	// error returned) was rolled back, yet the worker ran the job.
	StateScheduled:  {StateScheduled, StateDispatched, StateSucceeded, StateFailed, StateRetrying, StateCancelled, StateDenied},
	StateDispatched: {StateRunning, StateScheduled, StateSucceeded, StateFailed, StateRetrying, StateCancelled, StateTimeout},
	StateRunning:    {StateRunning, StateSucceeded, StateFailed, StateRetrying, StateCancelled, StateTimeout},
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
