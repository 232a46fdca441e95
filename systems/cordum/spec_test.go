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

// The gateway runs on the engine's admission defaults, which the spec
// promises to clients.
func TestRunAdmissionPromisesAreTheGatewaysConfig(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"}) // never dialled
	defer rdb.Close()
	admit, err := engine.NewAdmission(engine.AdmissionConfig{Redis: rdb, Clock: engine.RealClock{}, Random: engine.CryptoRandom{}})
	require.NoError(t, err)
	spec := System{}.Spec(sut.Options{})
	cfg := admit.Config()
	require.Equal(t, cfg.MaxRequestBytes, int64(spec.RunRequests.MaxBodyBytes))
	require.Equal(t, engine.MaxIdempotencyKeyBytes, spec.RunRequests.MaxKeyBytes)
	require.Equal(t, cfg.AdmissionLockWait, spec.RunAdmissionWait)
	require.Equal(t, cfg.StaleReservationAfter, spec.StaleReservationAfter)
	require.Equal(t, 1, spec.RunLimit, "one run at a time unless the options say otherwise")
	require.Equal(t, 3, System{}.Spec(sut.Options{RunLimit: 3}).RunLimit)
}
