package mutants

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every deep defect applies to today's engine, names its two events, and
// stays out of the release gate's catalog.
func TestDeepMutantsApply(t *testing.T) {
	inAll := map[string]bool{}
	for _, m := range All {
		inAll[m.Name] = true
	}
	for _, m := range Deep {
		require.False(t, inAll[m.Name], "%s is in the release catalog too", m.Name)
		require.Contains(t, m.Origin, "(1)", m.Name)
		require.Contains(t, m.Origin, "(2)", m.Name)
		require.NotEmpty(t, m.Catches, m.Name)
		_, err := m.Overlay("..", t.TempDir())
		require.NoError(t, err, m.Name)
	}
}
