package reports

import (
	"slices"
	"strings"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// stateRole is what a stored state is for in its system's spec: the pages
// colour a state by its role and label it with its own name, so a system
// whose states are QUEUED and TIMED_OUT reads as well as our engine's.
type stateRole struct {
	Class string // CSS class, "st-" and one of a fixed set: never a state name
	Word  string // the role in words, for the legend
}

// The roles, in the order a job's life passes through them; the legend
// follows it.
var (
	roleScheduled     = stateRole{"st-scheduled", "scheduled / queued"}
	roleDispatched    = stateRole{"st-dispatched", "dispatched"}
	roleRunning       = stateRole{"st-running", "running"}
	roleRetrying      = stateRole{"st-retrying", "retrying"}
	roleSucceeded     = stateRole{"st-succeeded", "succeeded"}
	roleFailed        = stateRole{"st-failed", "failed"}
	roleCancelled     = stateRole{"st-cancelled", "cancelled"}
	roleTimedOut      = stateRole{"st-timedout", "timed out"}
	roleOther         = stateRole{"st-other", "other, not terminal"}
	roleOtherTerminal = stateRole{"st-otherterminal", "other, terminal"}

	roleOrder = []stateRole{roleScheduled, roleDispatched, roleRunning, roleRetrying, roleSucceeded, roleFailed,
		roleCancelled, roleTimedOut, roleOther, roleOtherTerminal}
)

// stateRoles reads roles from a spec. Without a spec every state is "other"
// (its terminal states unknown), still labelled with its own name.
type stateRoles struct{ spec *sut.Spec }

// of is the role a state is coloured by. A state may hold several roles
// (a queue whose claim is both its scheduling pass and its dispatch): the
// one a job sits in longest wins, dispatched and running before scheduled.
func (r stateRoles) of(state string) stateRole {
	s := r.spec
	if s == nil || state == "" {
		return roleOther
	}
	switch state {
	case s.Dispatched:
		return roleDispatched
	case s.Running:
		return roleRunning
	case s.Scheduled:
		return roleScheduled
	case s.Retrying:
		return roleRetrying
	case s.Succeeded:
		return roleSucceeded
	case s.Failed:
		return roleFailed
	case s.Cancelled:
		return roleCancelled
	case s.TimedOut:
		return roleTimedOut
	}
	if s.IsTerminal(state) {
		return roleOtherTerminal
	}
	return roleOther
}

// title says which of the spec's roles a state holds, for a tooltip:
// "CLAIMED: the spec's Scheduled and Dispatched roles".
func (r stateRoles) title(state string) string {
	s := r.spec
	if s == nil || state == "" {
		return state + ": no spec names its role"
	}
	var held []string
	for _, role := range []struct{ name, state string }{{"Scheduled", s.Scheduled}, {"Dispatched", s.Dispatched},
		{"Running", s.Running}, {"Retrying", s.Retrying}, {"Succeeded", s.Succeeded}, {"Failed", s.Failed},
		{"Cancelled", s.Cancelled}, {"TimedOut", s.TimedOut}} {
		if role.state == state {
			held = append(held, role.name)
		}
	}
	switch {
	case len(held) == 1:
		return state + ": the spec's " + held[0] + " role"
	case len(held) > 1:
		return state + ": the spec's " + strings.Join(held[:len(held)-1], ", ") + " and " + held[len(held)-1] + " roles"
	case s.IsTerminal(state):
		return state + ": terminal, no role of the spec's"
	}
	return state + ": no role of the spec's, not terminal"
}

// legendRow is one role in the legend, with the states that have it.
type legendRow struct {
	Class, Word string
	States      []string
	// Title says the roles each of States holds, for the row's tooltip.
	Title string
}

// legend lists the roles of the spec's states and of any state the history
// holds beyond them (an unknown state is still shown, as "other"), in
// role order, each state under its own name.
func (r stateRoles) legend(h *history.History) []legendRow {
	var states []string
	if r.spec != nil {
		states = append(states, r.spec.States...)
		// A spec may leave States empty and still name the roles.
		for _, s := range []string{r.spec.Scheduled, r.spec.Dispatched, r.spec.Running, r.spec.Retrying,
			r.spec.Succeeded, r.spec.Failed, r.spec.Cancelled, r.spec.TimedOut} {
			if s != "" && !slices.Contains(states, s) {
				states = append(states, s)
			}
		}
	}
	if h != nil {
		for _, c := range h.States {
			if c.To != "" && !slices.Contains(states, c.To) {
				states = append(states, c.To)
			}
		}
	}
	var rows []legendRow
	for _, role := range roleOrder {
		row := legendRow{Class: role.Class, Word: role.Word}
		var titles []string
		for _, s := range states {
			if r.of(s) == role {
				row.States = append(row.States, s)
				titles = append(titles, r.title(s))
			}
		}
		row.Title = strings.Join(titles, "; ")
		if len(row.States) > 0 {
			rows = append(rows, row)
		}
	}
	return rows
}
