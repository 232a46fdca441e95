package simrun

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/reports"
)

// A never-fired kind is followed by its lead: what it needs to fire, naming
// the spec field or adapter hook that decides it. Entries that are not fault
// kinds (a sometimes-expectation) get none.
func TestNeverFiredKindsPrintTheirLead(t *testing.T) {
	var b bytes.Buffer
	printNeverFiredLeads(&b, reports.CaseResult{CaseSpec: reports.CaseSpec{Scenario: "cancels"},
		NeverFired: []string{"CancelWriteFails", "ReplicaCrashAfterApply", "sometimes lock_fenced"}})
	out := b.String()
	require.Contains(t, out, "CancelWriteFails fires at a replica's write that Observer.Command reports as a Transition into Spec.Cancelled; Spec.Cancels")
	require.Contains(t, out, "ReplicaCrashAfterApply fires at a replica's store write")
	require.Contains(t, out, "Spec.ReplicaWritesPerJob")
	require.NotContains(t, out, "lock_fenced")
}
