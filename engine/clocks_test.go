package engine

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// skewedClock is a replica's clock running skew from the test's.
type skewedClock struct {
	*manualClock
	skew time.Duration
}

func (c skewedClock) Now() time.Time { return c.manualClock.Now().Add(c.skew) }

// replicaWithSkew is a second replica on te's store and bus whose clock runs
// skew from te's.
func (te *testEngine) replicaWithSkew(t *testing.T, skew time.Duration) *Engine {
	t.Helper()
	e, err := New(Config{Redis: te.env.rdb, Bus: te.bus, Clock: skewedClock{te.env.clock, skew}, Random: te.env.rand,
		Registerer: prometheus.NewRegistry(), Routing: defaultTestRouting})
	require.NoError(t, err)
	for _, w := range []string{"w1", "w2"} {
		require.NoError(t, e.HandleHeartbeat(ctx, Heartbeat{WorkerID: w, Pool: "general", MaxParallel: 10}))
	}
	return e
}

// A window one replica opens and another judges is measured on the store's
// clock: a replica 90 s ahead judging a job stamped by one 90 s behind must
// not see three minutes that never passed. Before, the reconciler timed the
// job out 3 minutes early.
func TestTimeoutAcrossSkewedReplicasIsNotEarly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		behind := newTestEngine(t, env, func(c *Config) { c.Clock = skewedClock{env.clock, -90 * time.Second} })
		ahead := behind.replicaWithSkew(t, 90*time.Second)
		behind.dispatch(t, "j1")

		env.clock.Advance(DefaultRunningTimeout - time.Minute)
		require.NoError(t, ahead.ReconcileOnce(ctx))
		require.Equal(t, StateRunning, behind.state(t, "j1"), "a minute of the running timeout is left in true time")

		env.clock.Advance(time.Minute)
		require.NoError(t, ahead.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, behind.state(t, "j1"))
	})
}

// The pick grace window started by one replica is not shortened by another
// whose clock is ahead: before, the job failed no_pool_mapping_topic on the
// first retry the other replica handled, 3 minutes into a 30 s window.
func TestGraceAcrossSkewedReplicasIsNotShortened(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		behind := newTestEngine(t, env, func(c *Config) { c.Clock = skewedClock{env.clock, -90 * time.Second} })
		ahead := behind.replicaWithSkew(t, 90*time.Second)
		unmapped := JobRequest{JobID: "j1", Topic: "unmapped"}
		_, retry := AsRetryAfter(behind.HandleJobRequest(ctx, unmapped))
		require.True(t, retry, "no pool mapping yet: retried inside the grace window")

		env.clock.Advance(DefaultNoPoolMappingGrace - time.Second)
		_, retry = AsRetryAfter(ahead.HandleJobRequest(ctx, unmapped))
		require.True(t, retry, "a second of the grace window is left in true time")
		require.Equal(t, StateScheduled, behind.state(t, "j1"))

		env.clock.Advance(time.Second)
		require.NoError(t, ahead.HandleJobRequest(ctx, unmapped))
		require.Equal(t, StateFailed, behind.state(t, "j1"))
	})
}

// The de-duplication window of an ambiguous publish made by a replica ahead
// is judged by one behind on the store's clock: past the window in true time
// it withholds the re-publish the broker would no longer drop. Before, the
// replica behind saw 3 minutes less and published a second copy.
func TestDedupWindowAcrossSkewedReplicasIsNotStretched(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ahead := newTestEngine(t, env, func(c *Config) { c.Clock = skewedClock{env.clock, 90 * time.Second} })
		behind := ahead.replicaWithSkew(t, -90*time.Second)
		ahead.bus.stored = true
		ahead.bus.failNext("worker.", 1)
		_, retry := AsRetryAfter(ahead.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry, "the ambiguous publish is rolled back and retried")
		require.Equal(t, 1, ahead.bus.count("worker."), "the broker stored the first copy")

		env.clock.Advance(DefaultDedupWindow + time.Second)
		require.NoError(t, behind.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, ahead.bus.count("worker."), "no second copy outside the broker's window")
		require.Equal(t, StateDispatched, ahead.state(t, "j1"), "parked, awaiting the first copy")
	})
}
