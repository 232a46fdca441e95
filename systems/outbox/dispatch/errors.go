package dispatch

import (
	"errors"
	"fmt"
	"time"
)

// RetryAfterError asks the bus to redeliver the message after Delay (a NAK
// with delay). Phase says which step failed, for metrics and triage.
type RetryAfterError struct {
	Err   error
	Delay time.Duration
	Phase RetryPhase
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("retry after %s (%s): %v", e.Delay, e.Phase, e.Err)
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryPhase names the step of a handler that asked for a retry.
type RetryPhase string

// The retry phases, the label values of outbox_retry_total{phase}.
const (
	PhaseStore         RetryPhase = "store"
	PhasePick          RetryPhase = "pick"
	PhaseDispatchWrite RetryPhase = "dispatch_write"
	PhaseContention    RetryPhase = "contention"
)

// AsRetryAfter reports whether err asks for a redelivery, and after how long.
func AsRetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.Delay, true
	}
	return 0, false
}

// ErrJobNotFound: no job with that id in the store.
var ErrJobNotFound = errors.New("job not found")

// TransitionError is a compare-and-transition the store refused. Nothing
// changed: neither the state nor an outbox entry.
type TransitionError struct {
	JobID    string
	Expected JobState
	Actual   JobState // "" when the job does not exist
	To       JobState
	Reason   TransitionRefusal
}

// TransitionRefusal says why a transition was refused.
type TransitionRefusal string

const (
	// RefusedStale: the job is no longer in the state (or version) the caller saw.
	RefusedStale TransitionRefusal = "stale"
	// RefusedTerminal: the job is terminal; nothing moves it.
	RefusedTerminal TransitionRefusal = "terminal"
	// RefusedForbidden: the edge is not in the transition table.
	RefusedForbidden TransitionRefusal = "forbidden"
)

func (e *TransitionError) Error() string {
	return fmt.Sprintf("transition job %s %s -> %s refused (%s): store holds %s",
		e.JobID, stateName(e.Expected), e.To, e.Reason, stateName(e.Actual))
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

func refusal(err error) TransitionRefusal {
	var te *TransitionError
	if errors.As(err, &te) {
		return te.Reason
	}
	return ""
}
