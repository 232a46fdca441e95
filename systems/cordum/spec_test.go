package cordum

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// The promise is written out apart from the engine; today the two agree on
// every edge and every terminal state.
func TestSpecIsTheEnginesTable(t *testing.T) {
	spec := System{}.Spec(sut.Options{})
	for _, f := range append([]engine.JobState{""}, engine.AllStates...) {
		require.Equal(t, f.Terminal(), spec.IsTerminal(string(f)), "terminal %q", f)
		for _, to := range engine.AllStates {
			require.Equal(t, engine.TransitionAllowed(f, to), spec.Allowed(string(f), string(to)), "%q -> %s", f, to)
		}
	}
}
