package sut

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An attempt is charged by a move into Scheduled, on its own or in the
// middle of a compound step, from a state AttemptsFrom names (any, when
// it names none).
func TestChargesAttemptFollowsTheRule(t *testing.T) {
	s := Spec{Scheduled: "S", Dispatched: "D", CompoundSteps: map[string]string{"D": "S"}}
	require.True(t, s.ChargesAttempt("P", "S"))
	require.True(t, s.ChargesAttempt("S", "S"), "Cordum counts SCHEDULED -> SCHEDULED")
	require.True(t, s.ChargesAttempt("P", "D"), "P -> D passes through S")
	require.False(t, s.ChargesAttempt("S", "R"))
	s.AttemptsFrom = []string{"P"}
	require.True(t, s.ChargesAttempt("P", "S"))
	require.True(t, s.ChargesAttempt("P", "D"))
	require.False(t, s.ChargesAttempt("D", "S"), "a requeue from D is not charged")
	require.False(t, s.ChargesAttempt("S", "S"))
}
