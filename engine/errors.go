package engine

import (
	"errors"
	"fmt"
	"time"
)

// RetryAfterError asks the bus to redeliver the message after Delay (a NAK with
// delay). Phase says which step of the handler failed, for metrics and triage.
type RetryAfterError struct {
	Err   error
	Delay time.Duration
	Phase RetryPhase
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("retry after %s (%s): %v", e.Delay, e.Phase, e.Err)
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryPhase names the step of request handling that asked for a retry.
type RetryPhase string

// The retry phases, the label values of scheduler_retry_total{phase}.
const (
	PhaseStore           RetryPhase = "store"
	PhaseDispatchedWrite RetryPhase = "dispatched_write"
	PhasePublish         RetryPhase = "publish"
	PhaseRollbackWrite   RetryPhase = "rollback_write"
	PhasePick            RetryPhase = "pick"
	PhaseLock            RetryPhase = "lock"
)

// AsRetryAfter reports whether err asks for a redelivery, and after how long.
func AsRetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.Delay, true
	}
	return 0, false
}

var (
	// ErrLockBusy: another handler held the job lock for the whole wait.
	ErrLockBusy = errors.New("job lock busy")
	// ErrLockLost: the lock expired or was abandoned under a running handler; its
	// writes are fenced off from then on.
	ErrLockLost = errors.New("job lock lost")
	// ErrJobNotFound: no job with that id in the store.
	ErrJobNotFound = errors.New("job not found")
)

// TransitionError is a compare-and-transition the store refused. Nothing changed.
type TransitionError struct {
	JobID    string
	Expected JobState // the state the caller last saw
	Actual   JobState // the state the store holds ("" when the job does not exist)
	To       JobState
	Reason   TransitionRefusal
}

// TransitionRefusal says why a transition was refused.
type TransitionRefusal string

const (
	// RefusedStale: the job is no longer in the state the caller last saw.
	RefusedStale TransitionRefusal = "stale"
	// RefusedTerminal: the job is terminal; nothing moves it.
	RefusedTerminal TransitionRefusal = "terminal"
	// RefusedForbidden: the edge is not in the transition table.
	RefusedForbidden TransitionRefusal = "forbidden"
	// RefusedFenced: the caller's job lock is no longer held.
	RefusedFenced TransitionRefusal = "fenced"
)

func (e *TransitionError) Error() string {
	actual := string(e.Actual)
	if actual == "" {
		actual = "<none>"
	}
	return fmt.Sprintf("transition job %s %s -> %s refused (%s): store holds %s",
		e.JobID, stateName(e.Expected), e.To, e.Reason, actual)
}

func stateName(s JobState) string {
	if s == "" {
		return "<none>"
	}
	return string(s)
}

// IsTransitionRefused reports whether err is a refused compare-and-transition,
// as opposed to a store error whose outcome is unknown.
func IsTransitionRefused(err error) bool {
	var te *TransitionError
	return errors.As(err, &te)
}
