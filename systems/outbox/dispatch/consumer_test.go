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
