package cordum

import (
	"testing"

	"github.com/redis/go-redis/v9"
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

// The gateway runs with the engine's default body limit, which the spec
// promises to clients.
func TestRunRequestLimitsAreTheGatewaysConfig(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"}) // never dialled
	defer rdb.Close()
	admit, err := engine.NewAdmission(engine.AdmissionConfig{Redis: rdb, Clock: engine.RealClock{}, Random: engine.CryptoRandom{}})
	require.NoError(t, err)
	limits := System{}.Spec(sut.Options{}).RunRequests
	require.Equal(t, admit.Config().MaxRequestBytes, int64(limits.MaxBodyBytes))
	require.Equal(t, engine.MaxIdempotencyKeyBytes, limits.MaxKeyBytes)
}
