package dispatch

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// The consumer accepts a dispatch id once, remembers it for its TTL, and
// counts the duplicates it refused.
func TestConsumerAcceptsDispatchIDOnce(t *testing.T) {
	env := newTestEnv(t)
	reg := prometheus.NewRegistry()
	c, err := NewConsumer(env.rdb, ConsumerConfig{TTL: time.Hour, Registerer: reg})
	require.NoError(t, err)

	first, err := c.Accept(ctx, "d1")
	require.NoError(t, err)
	require.True(t, first)
	for range 3 {
		first, err = c.Accept(ctx, "d1")
		require.NoError(t, err)
		require.False(t, first)
	}
	first, err = c.Accept(ctx, "d2")
	require.NoError(t, err)
	require.True(t, first, "another dispatch of the same job is its own id")
	require.Equal(t, 3.0, testutil.ToFloat64(c.duplicates))

	env.clock.Advance(time.Hour)
	first, err = c.Accept(ctx, "d1")
	require.NoError(t, err)
	require.True(t, first, "past its TTL an id is forgotten: the TTL must outlast redelivery")

	_, err = c.Accept(ctx, "")
	require.Error(t, err)
}

// A store error is an unknown answer: the caller must not execute.
func TestConsumerErrorMeansDoNotExecute(t *testing.T) {
	env := newTestEnv(t)
	c, err := NewConsumer(env.rdb, ConsumerConfig{})
	require.NoError(t, err)
	env.mr.SetError("LOADING")
	first, err := c.Accept(ctx, "d1")
	require.Error(t, err)
	require.False(t, first)
}

// A copy of a dispatch that reaches the worker after its job moved on (a
// cancel between the relay's claim and its publish, a later generation) is
// refused and not marked; the current dispatch runs once.
func TestConsumerAcceptsOnlyTheCurrentDispatch(t *testing.T) {
	env := newTestEnv(t)
	c, err := NewConsumer(env.rdb, ConsumerConfig{TTL: time.Hour})
	require.NoError(t, err)
	env.mr.HSet(jobKey("j1"), "state", string(StateDispatched), "dispatch_gen", "2")

	first, err := c.AcceptCurrent(ctx, "j1", 1, "d-gen1")
	require.NoError(t, err)
	require.False(t, first, "an earlier generation's copy")
	first, err = c.AcceptCurrent(ctx, "j1", 2, "d-gen2")
	require.NoError(t, err)
	require.True(t, first)
	first, err = c.AcceptCurrent(ctx, "j1", 2, "d-gen2")
	require.NoError(t, err)
	require.False(t, first, "a duplicate")

	env.mr.HSet(jobKey("j2"), "state", string(StateCancelled), "dispatch_gen", "0")
	first, err = c.AcceptCurrent(ctx, "j2", 0, "d-j2")
	require.NoError(t, err)
	require.False(t, first, "a cancelled job's copy")
	require.False(t, env.mr.Exists(consumedKeyPrefix+"d-j2"), "a refused copy is not marked as run")
	env.mr.HSet(jobKey("j2"), "state", string(StateRunning))
	first, err = c.AcceptCurrent(ctx, "j2", 0, "d-j2")
	require.NoError(t, err)
	require.True(t, first, "running under its generation")

	_, err = c.AcceptCurrent(ctx, "", 0, "d")
	require.Error(t, err)
}
