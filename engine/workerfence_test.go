package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// World-swarm seed 1004032: a replica paused past its lock TTL between the
// DISPATCHED write and the publish; the reconciler took the lock and timed the
// job out; the replica woke and published a TIMEOUT job, and a worker ran it.
// The lock is renewed just before the publish: lost, nothing is published.
func TestPauseBetweenDispatchWriteAndPublishPublishesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		staged := false
		te.hook.add(func(args []any) bool {
			if !isScript(args, renewLockScript) || staged || te.state(t, "j1") != StateDispatched {
				return false
			}
			// The pause: the lock expires, the reconciler's TIMEOUT lands.
			staged = true
			te.env.clock.Advance(DefaultLockTTL + time.Second)
			te.env.expireKey(t, jobLockKey("j1"))
			te.putJob(t, "j1", StateTimeout)
			return false
		}, false, -1)

		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, staged, "the pause was staged before the publish")
		require.True(t, retry, "the request is handed back; the redelivery gate drops it")
		require.Equal(t, 0, te.bus.count("worker."), "a job no longer ours is not published")
		require.Equal(t, StateTimeout, te.state(t, "j1"))
		require.Equal(t, 1.0, te.counter(te.metrics.publishWithheld.WithLabelValues("lock_lost")))
	})
}

// A lock that merely expired during the pause (nobody else came) is taken
// again, the job read back as this pass left it, and the publish goes ahead:
// withholding it would cost a TIMEOUT for nothing. That holds also when the
// section's renewal timer saw the lock gone first and fenced the section. A
// lock another replica holds is never taken from it.
func TestExpiredLockIsRetakenForThePublishOnlyIfNobodyTookIt(t *testing.T) {
	cases := []struct {
		name      string
		pause     func(te *testEngine) // at the handler's renewal before the publish
		published bool
	}{
		{"expired", func(te *testEngine) {
			te.env.expireKey(t, jobLockKey("j1"))
		}, true},
		{"expired and fenced by the renewal timer", func(te *testEngine) {
			te.env.expireKey(t, jobLockKey("j1"))
			te.env.clock.Advance(DefaultLockTTL) // the timer's renewal finds it gone
		}, true},
		{"taken by another", func(te *testEngine) {
			te.env.expireKey(t, jobLockKey("j1"))
			require.NoError(t, te.env.rdb.Set(ctx, jobLockKey("j1"), "another-token", DefaultLockTTL).Err())
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, env *testEnv) {
				te := newTestEngine(t, env)
				staged := false
				te.hook.add(func(args []any) bool {
					if !isScript(args, renewLockScript) || staged || te.state(t, "j1") != StateDispatched {
						return false
					}
					staged = true
					tc.pause(te)
					return false
				}, false, -1)
				_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
				require.True(t, staged)
				if !tc.published {
					require.True(t, retry)
					require.Equal(t, 0, te.bus.count("worker."), "the lock is another's")
					require.Equal(t, StateDispatched, te.state(t, "j1"))
					require.Equal(t, 1.0, te.counter(te.metrics.publishWithheld.WithLabelValues("lock_lost")))
					return
				}
				require.Equal(t, 1, te.bus.count("worker."), "nobody moved the job: it goes out")
				require.Equal(t, StateRunning, te.state(t, "j1"))
				require.Equal(t, 0.0, te.counter(te.metrics.publishWithheld.WithLabelValues("lock_lost")))
			})
		})
	}
}

// A pause can also fall after the check, right at the publish: then the worker
// is the fence. It runs a packet only while the job is not terminal and at the
// packet's generation.
func TestDispatchCurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		packet := JobPacket{JobID: "j1", DispatchGen: 0}
		current := func() bool {
			ok, err := DispatchCurrent(ctx, te.env.rdb, packet)
			require.NoError(t, err)
			return ok
		}
		require.False(t, current(), "no such job")
		for _, st := range []JobState{StateScheduled, StateDispatched, StateRunning, StateRetrying} {
			te.putJob(t, "j1", st)
			require.True(t, current(), "%s at generation 0", st)
		}
		for _, st := range []JobState{StateSucceeded, StateFailed, StateTimeout, StateCancelled} {
			te.putJob(t, "j1", st)
			require.False(t, current(), "%s is terminal", st)
		}
		te.putJob(t, "j1", StateRunning)
		require.NoError(t, te.env.rdb.HSet(ctx, jobKey("j1"), "dispatch_gen", 1).Err())
		require.False(t, current(), "a packet of an earlier generation")

		te.hook.add(commandIs("hmget", jobKey("j1")), false, 1)
		_, err := DispatchCurrent(ctx, te.env.rdb, packet)
		require.Error(t, err, "an unknown job is an error, never a yes")
	})
}
