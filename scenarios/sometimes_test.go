package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A declared sometimes-expectation no seed reached fails the case and is
// listed with the kinds that never fired.
func TestSometimesNeverReachedFailsTheCase(t *testing.T) {
	sc, _ := Lookup("swarm")
	rep := RunCase(Case{Scenario: sc, Seeds: []uint64{9000}, Sometimes: []string{"publish_rollback", "no_such_branch"}}, nil)
	require.Contains(t, rep.NeverFired, SometimesNeverReached("no_such_branch"))
	require.NotContains(t, rep.NeverFired, SometimesNeverReached("publish_rollback"), "seed 9000 reaches it")
	require.False(t, rep.Passed())
}
