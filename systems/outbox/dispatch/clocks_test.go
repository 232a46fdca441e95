package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// skewedClock is a replica's clock running skew from the test's (the store's).
type skewedClock struct {
	*manualClock
	skew time.Duration
}

func (c skewedClock) Now() time.Time { return c.manualClock.Now().Add(c.skew) }

// skewed is a replica option: its clock runs skew from the store's.
func skewed(env *testEnv, skew time.Duration) func(*Config) {
	return func(c *Config) { c.Clock = skewedClock{env.clock, skew} }
}

// A job dispatched by a replica 90 s behind is judged by one 90 s ahead on
// the store's clock: the replica ahead must not see three minutes that never
// passed. Before, it timed the job out while its dispatch was still owed, and
// a worker ran a job already TIMEOUT.
func TestDispatchTimeoutAcrossSkewedReplicasIsNotEarly(t *testing.T) {
	env := newTestEnv(t)
	behind := env.replica(t, skewed(env, -90*time.Second))
	ahead := env.replica(t, skewed(env, 90*time.Second))
	behind.submit(t, "j1")

	require.NoError(t, ahead.ReconcileOnce(ctx))
	require.Equal(t, StateDispatched, ahead.state(t, "j1"), "just dispatched in true time")

	env.clock.Advance(DefaultDispatchTimeout - time.Minute)
	require.NoError(t, ahead.ReconcileOnce(ctx))
	require.Equal(t, StateDispatched, ahead.state(t, "j1"), "a minute of the dispatch timeout is left in true time")

	env.clock.Advance(time.Minute)
	require.NoError(t, ahead.ReconcileOnce(ctx))
	require.Equal(t, StateTimeout, ahead.state(t, "j1"))
	require.Equal(t, 1, behind.relay(t), "the DLQ announcement only")
	require.Empty(t, env.bus.to("worker."), "the timed-out job's dispatch is dropped, never published")
}

// A RUNNING job marked sent by a replica behind is not timed out early by one
// ahead either: the mark-sent stamps RUNNING on the store's clock.
func TestRunningTimeoutAcrossSkewedReplicasIsNotEarly(t *testing.T) {
	env := newTestEnv(t)
	behind := env.replica(t, skewed(env, -90*time.Second))
	ahead := env.replica(t, skewed(env, 90*time.Second))
	behind.submit(t, "j1")
	require.Equal(t, 1, behind.relay(t))

	env.clock.Advance(DefaultRunningTimeout - time.Minute)
	require.NoError(t, ahead.ReconcileOnce(ctx))
	require.Equal(t, StateRunning, ahead.state(t, "j1"), "a minute of the running timeout is left in true time")

	env.clock.Advance(time.Minute)
	require.NoError(t, ahead.ReconcileOnce(ctx))
	require.Equal(t, StateTimeout, ahead.state(t, "j1"))
}

// A lease taken by a relay behind holds against a relay ahead: before, the
// relay ahead found the entry due at once and published a second copy while
// the first claimer still held it.
func TestRelayLeaseAcrossSkewedReplicasHolds(t *testing.T) {
	env := newTestEnv(t)
	behind := env.replica(t, skewed(env, -90*time.Second))
	ahead := env.replica(t, skewed(env, 90*time.Second))
	behind.submit(t, "j1")
	env.bus.failNext("worker.", 1)
	require.Equal(t, 0, behind.relay(t), "claimed, publish failed")

	require.Equal(t, 0, ahead.relay(t), "the lease holds in true time")
	env.clock.Advance(DefaultRelayLease)
	require.Equal(t, 1, ahead.relay(t))
	require.Len(t, env.bus.to("worker."), 1)
}

// An entry queued by a replica ahead is due at once for a relay behind:
// before, it waited out the three minutes between their clocks.
func TestEntryQueuedAheadIsDueAtOnceBehind(t *testing.T) {
	env := newTestEnv(t)
	ahead := env.replica(t, skewed(env, 90*time.Second))
	behind := env.replica(t, skewed(env, -90*time.Second))
	ahead.submit(t, "j1")

	require.Equal(t, 1, behind.relay(t))
	require.Equal(t, StateRunning, behind.state(t, "j1"))
}
