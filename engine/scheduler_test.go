package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// Seed 000 / Cordum regression: a failed DISPATCHED write publishes nothing; the
// replay publishes exactly once.
func TestDispatchedWriteFailureThenReplayPublishesOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.hook.add(transitionTo(StateDispatched), false, 1)

		err := te.HandleJobRequest(ctx, req("j1"))
		delay, retry := AsRetryAfter(err)
		require.True(t, retry, "want retry-after, got %v", err)
		require.Equal(t, DefaultStoreRetryDelay, delay)
		require.Equal(t, 0, te.bus.count("worker."))
		require.Equal(t, StateScheduled, te.state(t, "j1"))

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
		require.Equal(t, StateRunning, te.state(t, "j1"))

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")), "redelivery of a RUNNING job")
		require.Equal(t, 1, te.bus.count("worker."))
	})
}

// A DISPATCHED write whose reply is lost landed all the same: the confirming read
// sees this pass's dispatch id and publishes, instead of leaving the job DISPATCHED
// and unpublished until the dispatch timeout.
func TestDispatchedWriteReplyLostIsConfirmedAndPublished(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.hook.add(transitionTo(StateDispatched), true, 1)

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
		require.Equal(t, StateRunning, te.state(t, "j1"))
		require.Equal(t, 1.0, te.counter(te.metrics.unknownWrite.WithLabelValues("applied")))
	})
}

// When the confirming read fails too, nothing is published and the job stays
// DISPATCHED: the residual blind window the reconciler closes.
func TestDispatchedWriteReplyLostAndReadFailsPublishesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		require.NoError(t, te.HandleHeartbeat(ctx, Heartbeat{WorkerID: "w1", Pool: "general", MaxParallel: 10}))
		te.hook.add(transitionTo(StateDispatched), true, 1)
		reads := 0
		te.hook.add(func(args []any) bool {
			if strings.EqualFold(args[0].(string), "hgetall") {
				reads++
				return reads == 2 // the first read is the state read; the second confirms
			}
			return false
		}, false, 1)

		_, retry := AsRetryAfter(te.HandleJobRequest(ctx, req("j1")))
		require.True(t, retry)
		require.Equal(t, 0, te.bus.count("worker."))
		require.Equal(t, StateDispatched, te.state(t, "j1"))
		require.Equal(t, 1.0, te.counter(te.metrics.unknownWrite.WithLabelValues("unresolved")))

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")), "redelivery is gated")
		require.Equal(t, 0, te.bus.count("worker."))
	})
}

// Cordum regression: the RUNNING write fails after the publish; the job stays
// DISPATCHED and redelivery skips it.
func TestRunningWriteFailureAfterPublishLeavesDispatched(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.hook.add(transitionTo(StateRunning), false, 1)

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, StateDispatched, te.state(t, "j1"))
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
		require.Equal(t, 1.0, te.counter(te.metrics.redeliverySkip.WithLabelValues("DISPATCHED")))
	})
}

// Cordum regression (DEF-1): each publish-failure replay counts two attempts.
func TestPublishFailureReplayedTwiceCountsFourAttempts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.failNext("worker.", 2)

		for i := range 2 {
			err := te.HandleJobRequest(ctx, req("j1"))
			var ra *RetryAfterError
			require.ErrorAs(t, err, &ra, "replay %d", i)
			require.Equal(t, PhasePublish, ra.Phase)
			require.Equal(t, StateScheduled, te.state(t, "j1"))
		}
		j := te.job(t, "j1")
		require.Equal(t, 4, j.Attempts)
		require.Equal(t, ReasonPublishFailed, j.LastErrorCode)
		require.Equal(t, 2.0, te.counter(te.metrics.rollback.WithLabelValues("default")))
		require.Equal(t, 0.0, te.counter(te.metrics.rollbackFailure.WithLabelValues("default")))

		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 1, te.bus.count("worker."))
	})
}

// Seed 000's residual risk: the rollback write fails, the job stays DISPATCHED,
// the failure has its own metric, and the reconciler times the job out.
func TestRollbackFailureLeavesDispatchedUntilReconciler(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.bus.failNext("worker.", 1)
		// Fail only the rollback (SCHEDULED from DISPATCHED).
		te.hook.add(func(args []any) bool {
			return transitionTo(StateScheduled)(args) && args[8] == "DISPATCHED"
		}, false, 1)

		var ra *RetryAfterError
		require.ErrorAs(t, te.HandleJobRequest(ctx, req("j1")), &ra)
		require.Equal(t, PhaseRollbackWrite, ra.Phase)
		require.Equal(t, StateDispatched, te.state(t, "j1"))
		require.Equal(t, 1.0, te.counter(te.metrics.rollbackFailure.WithLabelValues("default")))
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 0, te.bus.count("worker."), "gated while DISPATCHED")

		te.env.clock.Advance(DefaultDispatchTimeout - time.Second)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateDispatched, te.state(t, "j1"))
		te.env.clock.Advance(time.Second)
		require.NoError(t, te.ReconcileOnce(ctx))
		require.Equal(t, StateTimeout, te.state(t, "j1"))
		entry, err := te.store.DLQEntry(ctx, "j1")
		require.NoError(t, err)
		require.Equal(t, ReasonDispatchTimeout, entry.ReasonCode)
		require.Equal(t, StateDispatched, entry.LastState)
	})
}

// Seed 001 / Cordum regression: a failed state read publishes nothing; the next
// read sees RUNNING and still publishes nothing.
func TestStateReadErrorFailsClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		te.putJob(t, "j1", StateScheduled)
		te.hook.add(commandIs("hgetall", jobKey("j1")), false, 1)

		var ra *RetryAfterError
		require.ErrorAs(t, te.HandleJobRequest(ctx, req("j1")), &ra)
		require.Equal(t, DefaultStoreRetryDelay, ra.Delay)
		require.Equal(t, 0, te.bus.count("worker."))
		require.Equal(t, 1.0, te.counter(te.metrics.failClosed.WithLabelValues("default")))

		require.NoError(t, env.rdb.HSet(ctx, jobKey("j1"), "state", string(StateRunning)).Err())
		require.NoError(t, te.HandleJobRequest(ctx, req("j1")))
		require.Equal(t, 0, te.bus.count("worker."))
	})
}

// Cordum regression: the redelivery table.
func TestRedeliveryGate(t *testing.T) {
	cases := []struct {
		state     JobState
		publishes int
	}{
		{StateDispatched, 0}, {StateRunning, 0}, {StateSucceeded, 0}, {StateFailed, 0},
		{StateCancelled, 0}, {StateTimeout, 0}, {StateDenied, 0},
		{StateScheduled, 1}, {StatePending, 1}, {StateRetrying, 1},
	}
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		for _, c := range cases {
			id := "job-" + string(c.state)
			te.putJob(t, id, c.state)
			before := te.bus.count("worker.")
			require.NoError(t, te.HandleJobRequest(ctx, JobRequest{JobID: id, Topic: "default"}), c.state)
			require.Equal(t, c.publishes, te.bus.count("worker.")-before, "state %s", c.state)
			if c.publishes == 0 {
				require.Equal(t, c.state, te.state(t, id), "state %s must not change", c.state)
			}
		}
	})
}

func TestInvalidRequestFailsWithDLQ(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		require.NoError(t, te.HandleJobRequest(ctx, JobRequest{JobID: "j1"}))
		require.Equal(t, StateFailed, te.state(t, "j1"))
		entry, err := te.store.DLQEntry(ctx, "j1")
		require.NoError(t, err)
		require.Equal(t, ReasonInvalidRequest, entry.ReasonCode)

		require.NoError(t, te.HandleJobRequest(ctx, JobRequest{Topic: "default"}))
		require.Equal(t, 2, te.bus.count(SubjectDLQ))
		require.Equal(t, 0, te.bus.count("worker."))
	})
}

// Seed 003: each no_pool_mapping cause retries through the grace window, then
// fails with a reason code that names it.
func TestNoPoolMappingCausesFailAfterGraceWithTheirCode(t *testing.T) {
	cases := []struct {
		name string
		req  JobRequest
		code ReasonCode
	}{
		{"topic unmapped", JobRequest{JobID: "j", Topic: "unmapped"}, ReasonNoPoolMappingTopic},
		{"preferred pool unmapped", JobRequest{JobID: "j", Topic: "default", PreferredPool: "gpu-pool"}, ReasonNoPoolMappingPreferred},
		{"requires unsatisfied", JobRequest{JobID: "j", Topic: "default", Requires: []string{"gpu"}}, ReasonNoPoolMappingRequires},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, env *testEnv) {
				te := newTestEngine(t, env)
				start := te.clock.Now()
				var retries int
				for {
					err := te.HandleJobRequest(ctx, c.req)
					if err == nil {
						break
					}
					var ra *RetryAfterError
					require.ErrorAs(t, err, &ra)
					require.Equal(t, PhasePick, ra.Phase)
					require.ErrorIs(t, err, ErrNoPoolMapping)
					retries++
					te.env.clock.Advance(ra.Delay)
				}
				require.Greater(t, retries, 1, "retried during the grace window")
				require.GreaterOrEqual(t, te.clock.Now().Sub(start), DefaultNoPoolMappingGrace)
				require.Equal(t, StateFailed, te.state(t, "j"))
				entry, err := te.store.DLQEntry(ctx, "j")
				require.NoError(t, err)
				require.Equal(t, c.code, entry.ReasonCode)
				require.False(t, entry.RetriesExhausted)
				require.Equal(t, 0, te.bus.count("worker."))
			})
		})
	}
}

// Seed 003's rollout race: the mapping arrives inside the grace window and the
// job is dispatched.
func TestNoPoolMappingHealsWhenRoutingArrives(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env)
		r := JobRequest{JobID: "j", Topic: "late"}
		var ra *RetryAfterError
		require.ErrorAs(t, te.HandleJobRequest(ctx, r), &ra)
		te.env.clock.Advance(ra.Delay)

		routing := defaultTestRouting
		routing.Topics = map[string][]string{"late": {"general"}}
		te.SetRouting(routing)
		te.heartbeat("w1", "general", 0)
		require.NoError(t, te.HandleJobRequest(ctx, r))
		require.Equal(t, StateRunning, te.state(t, "j"))
		require.True(t, te.job(t, "j").PickFailSince.IsZero(), "pick failure cleared on dispatch")
		// World swarm seed 1002447: the job later failed at the retry cap and its
		// DLQ entry named no_pool_mapping_topic, a cause healed long before.
		require.Empty(t, te.job(t, "j").LastErrorCode, "the healed cause is not left to name a later failure")
	})
}

// A transient cause retries to the cap; the DLQ entry names it, not just
// max_scheduling_retries.
func TestTransientCauseAtRetryCapNamesRootCause(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env, func(c *Config) { c.MaxSchedulingRetries = 5 })
		te.registry = NewWorkerRegistry(DefaultWorkerTTL) // no workers
		var n int
		for {
			err := te.HandleJobRequest(ctx, req("j"))
			if err == nil {
				break
			}
			var ra *RetryAfterError
			require.ErrorAs(t, err, &ra)
			require.ErrorIs(t, err, ErrNoWorkers)
			require.LessOrEqual(t, ra.Delay, DefaultBackoffMax)
			te.env.clock.Advance(ra.Delay)
			n++
		}
		require.Equal(t, 5, n)
		entry, err := te.store.DLQEntry(ctx, "j")
		require.NoError(t, err)
		require.Equal(t, ReasonNoWorkers, entry.ReasonCode)
		require.True(t, entry.RetriesExhausted)
		require.Equal(t, 5, entry.Attempts)
		require.Equal(t, 1.0, te.counter(te.metrics.dlq.WithLabelValues(string(ReasonNoWorkers))))
	})
}

func TestTenantLimitIsTransient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env, func(c *Config) { c.TenantMaxActive = map[string]int{"acme": 1} })
		require.NoError(t, te.HandleJobRequest(ctx, JobRequest{JobID: "a", Topic: "default", Tenant: "acme"}))
		err := te.HandleJobRequest(ctx, JobRequest{JobID: "b", Topic: "default", Tenant: "acme"})
		require.ErrorIs(t, err, ErrTenantLimit)
		require.NoError(t, te.HandleJobResult(ctx, JobResult{JobID: "a", Status: ResultSucceeded}))
		require.NoError(t, te.HandleJobRequest(ctx, JobRequest{JobID: "b", Topic: "default", Tenant: "acme"}))
		require.Equal(t, 2, te.bus.count("worker."))
	})
}

func TestBackoffBounds(t *testing.T) {
	env := newMiniredisEnv(t)
	te := newTestEngine(t, env)
	for attempt := 0; attempt < 60; attempt++ {
		d := te.backoff(attempt)
		base := DefaultBackoffBase << min(attempt, backoffMaxShift)
		require.GreaterOrEqual(t, d, min(base, DefaultBackoffMax), "attempt %d", attempt)
		require.Less(t, d, min(base+DefaultBackoffJitterMax, DefaultBackoffMax+1), "attempt %d", attempt)
	}
}

// World swarm seed 1002324: a topic's mapping healed, a pick then succeeded
// but the DISPATCHED write failed, and at the retry cap the DLQ entry named
// no_pool_mapping_topic, a cause that no longer held. At the cap the pick is
// asked again: it succeeds, so only the cap is named, and the stale cause goes.
func TestRetryCapNeverNamesAHealedCause(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		te := newTestEngine(t, env, func(c *Config) { c.MaxSchedulingRetries = 1 })
		te.heartbeat("w1", "general", 0)
		te.putJob(t, "j", StateScheduled)
		require.NoError(t, env.rdb.HSet(ctx, jobKey("j"), "last_error_code", string(ReasonNoPoolMappingTopic)).Err())

		require.NoError(t, te.HandleJobRequest(ctx, req("j")))
		require.Equal(t, StateFailed, te.state(t, "j"))
		entry, err := te.store.DLQEntry(ctx, "j")
		require.NoError(t, err)
		require.Equal(t, ReasonMaxSchedulingRetries, entry.ReasonCode)
		require.Empty(t, te.job(t, "j").LastErrorCode)
	})
}
