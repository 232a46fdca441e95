package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The request handler writes DISPATCHED and the outbox entry together and
// publishes nothing itself.
func TestRequestWritesStateAndOutboxEntryAndNeverPublishes(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	r.submit(t, "j1")

	job := r.job(t, "j1")
	require.Equal(t, StateDispatched, job.State)
	require.Equal(t, 1, job.Attempts)
	require.NotEmpty(t, job.DispatchID)
	require.Equal(t, "w1", job.Worker)
	entry, err := r.store.Entry(ctx, job.DispatchID)
	require.NoError(t, err)
	require.Equal(t, "dispatch", entry["kind"])
	require.Equal(t, "jobreq:j1", entry["msg_id"])
	require.Equal(t, WorkerSubject("w1"), entry["subject"])
	require.EqualValues(t, 1, r.pending(t))
	require.Empty(t, env.bus.published, "only the relay publishes")

	// Redelivery of the request finds the job DISPATCHED: no second entry.
	r.submit(t, "j1")
	require.EqualValues(t, 1, r.pending(t))
	require.Equal(t, 1.0, r.counter(t, "outbox_redelivery_skipped_total", "DISPATCHED"))
}

// A dispatch refused by its compare-and-transition writes neither the state
// nor the outbox entry; one whose script never ran writes neither either; one
// whose reply was lost wrote both, and the redelivery adds nothing.
func TestDispatchScriptWritesStateAndOutboxEntryOrNeither(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)

	_, err := r.store.Transition(ctx, Transition{JobID: "j1", To: StatePending, Fields: jobFields(JobRequest{JobID: "j1", Topic: "default"})})
	require.NoError(t, err)
	_, err = r.store.Dispatch(ctx, Dispatch{JobID: "j1", From: StatePending, Version: 7, DispatchID: "d-stale",
		Worker: "w1", Subject: WorkerSubject("w1"), MessageID: "jobreq:j1", Packet: []byte("{}")})
	require.True(t, IsTransitionRefused(err), "%v", err)
	require.Equal(t, StatePending, r.state(t, "j1"))
	require.False(t, env.mr.Exists(EntryKey("d-stale")))
	require.EqualValues(t, 0, r.pending(t))

	env.hook.failScript(dispatchScript, false, 1)
	err = r.HandleJobRequest(ctx, JobRequest{JobID: "j1", Topic: "default"})
	_, retry := AsRetryAfter(err)
	require.True(t, retry, "%v", err)
	require.Equal(t, StatePending, r.state(t, "j1"))
	require.EqualValues(t, 0, r.pending(t))

	env.hook.failScript(dispatchScript, true, 1)
	err = r.HandleJobRequest(ctx, JobRequest{JobID: "j1", Topic: "default"})
	_, retry = AsRetryAfter(err)
	require.True(t, retry, "a lost reply is an unknown outcome: %v", err)
	require.Equal(t, StateDispatched, r.state(t, "j1"))
	require.EqualValues(t, 1, r.pending(t))
	r.submit(t, "j1")
	require.EqualValues(t, 1, r.pending(t), "the redelivery finds DISPATCHED and writes nothing")
	require.Equal(t, 1, r.relay(t))
}

// A failed pick counts an attempt and records its cause; at the cap the job
// fails with a DLQ entry naming that cause, written with the state and
// announced through the outbox.
func TestPickFailureRetriesThenFailsWithRootCause(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t, func(c *Config) {
		c.MaxSchedulingRetries = 2
		c.Routing = Routing{Topics: map[string][]string{"default": {"gpu"}}}
	})
	for attempt := 1; attempt <= 2; attempt++ {
		err := r.HandleJobRequest(ctx, JobRequest{JobID: "j1", Topic: "default"})
		_, retry := AsRetryAfter(err)
		require.True(t, retry, "%v", err)
		job := r.job(t, "j1")
		require.Equal(t, StateScheduled, job.State)
		require.Equal(t, attempt, job.Attempts)
		require.Equal(t, ReasonNoWorkers, job.LastErrorCode)
	}
	r.submit(t, "j1")
	require.Equal(t, StateFailed, r.state(t, "j1"))
	entry, err := r.store.DLQEntry(ctx, "j1")
	require.NoError(t, err)
	require.Equal(t, ReasonNoWorkers, entry.ReasonCode)
	require.True(t, entry.RetriesExhausted)
	require.Empty(t, env.bus.published)

	require.Equal(t, 1, r.relay(t))
	dlq := env.bus.to(SubjectDLQ)
	require.Len(t, dlq, 1)
	require.Equal(t, "dlq:j1", dlq[0].ID)
}

// A request without a topic fails the job with an invalid_request DLQ entry;
// one without a job id has nothing to store, and only its DLQ announcement is
// queued. Both go out through the relay.
func TestInvalidRequests(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	require.NoError(t, r.HandleJobRequest(ctx, JobRequest{JobID: "j1"}))
	require.Equal(t, StateFailed, r.state(t, "j1"))
	entry, err := r.store.DLQEntry(ctx, "j1")
	require.NoError(t, err)
	require.Equal(t, ReasonInvalidRequest, entry.ReasonCode)

	require.NoError(t, r.HandleJobRequest(ctx, JobRequest{Topic: "default"}))
	require.EqualValues(t, 2, r.pending(t))
	require.Empty(t, env.bus.published)
	require.Equal(t, 2, r.relay(t))
	require.Len(t, env.bus.to(SubjectDLQ), 2)
	require.Equal(t, 2.0, r.counter(t, "outbox_dlq_total", string(ReasonInvalidRequest)))
}

// Two replicas handling one request concurrently dispatch it once: the
// loser's compare-and-transition is refused, it re-reads and finds DISPATCHED.
func TestConcurrentRequestsDispatchOnce(t *testing.T) {
	env := newTestEnv(t)
	a, b := env.replica(t), env.replica(t)
	_, err := a.store.Transition(ctx, Transition{JobID: "j1", To: StatePending, Fields: jobFields(JobRequest{JobID: "j1", Topic: "default"})})
	require.NoError(t, err)

	// a reads the job; b dispatches it; then a's dispatch script runs on what it read.
	seen := a.job(t, "j1")
	b.submit(t, "j1")
	_, err = a.store.Dispatch(ctx, Dispatch{JobID: "j1", From: seen.State, Version: seen.Version, DispatchID: "d-a",
		Worker: "w1", Subject: WorkerSubject("w1"), MessageID: "jobreq:j1", Packet: []byte("{}")})
	require.True(t, IsTransitionRefused(err), "%v", err)
	require.False(t, env.mr.Exists(EntryKey("d-a")))
	a.submit(t, "j1")
	require.EqualValues(t, 1, a.pending(t))
	require.Equal(t, 1, a.relay(t)+b.relay(t))
}

// A topic with no pool is retried for the grace window, counted from the
// store's stamp of the pass that first met it, and then fails the job with
// that cause: not before, and not at the attempt cap 25 minutes later while
// its delivery holds one of the broker's in-flight slots (world-swarm
// 9501447: fifteen such jobs behind an in-flight limit of ten outlived the
// heal phase).
func TestUnmappedTopicFailsAfterGraceWindow(t *testing.T) {
	env := newTestEnv(t)
	a, b := env.replica(t), env.replica(t)
	req := JobRequest{JobID: "j1", Topic: "orphan"}
	handle := func(r *testReplica) {
		t.Helper()
		_, retry := AsRetryAfter(r.HandleJobRequest(ctx, req))
		require.True(t, retry, "an unmapped topic inside the grace window is retried")
	}
	handle(a)
	opened := a.job(t, "j1").UpdatedAt
	require.Equal(t, ReasonNoPoolMappingTopic, a.job(t, "j1").LastErrorCode)
	env.clock.Advance(10 * time.Second)
	handle(b) // another replica's pass keeps the window the first one opened
	require.Equal(t, opened, b.job(t, "j1").PickFailSince)
	env.clock.Advance(DefaultNoPoolMappingGrace - 10*time.Second - time.Millisecond)
	handle(a)
	require.Equal(t, StateScheduled, a.state(t, "j1"), "failed before the grace window ended")

	env.clock.Advance(time.Millisecond)
	require.NoError(t, b.HandleJobRequest(ctx, req))
	require.Equal(t, StateFailed, b.state(t, "j1"))
	entry, err := b.store.DLQEntry(ctx, "j1")
	require.NoError(t, err)
	require.Equal(t, ReasonNoPoolMappingTopic, entry.ReasonCode)
	require.False(t, entry.RetriesExhausted)
	require.Equal(t, 3, entry.Attempts, "the three passes that failed to pick")
}

// The window is for one unbroken cause: a pass that fails for another cause,
// or a dispatch, closes it, and the next unmapped pass opens a new one.
func TestUnmappedTopicGraceWindowRestartsAfterAnotherCause(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	req := JobRequest{JobID: "j1", Topic: "default"}
	r.SetRouting(Routing{})
	for range 2 {
		_, retry := AsRetryAfter(r.HandleJobRequest(ctx, req))
		require.True(t, retry)
	}
	require.False(t, r.job(t, "j1").PickFailSince.IsZero())

	// The mapping arrives, but names a pool with no live worker.
	r.SetRouting(Routing{Topics: map[string][]string{"default": {"gpu"}}})
	_, retry := AsRetryAfter(r.HandleJobRequest(ctx, req))
	require.True(t, retry)
	require.Equal(t, ReasonNoWorkers, r.job(t, "j1").LastErrorCode)
	require.True(t, r.job(t, "j1").PickFailSince.IsZero(), "another cause closes the window")

	env.clock.Advance(DefaultNoPoolMappingGrace)
	r.SetRouting(Routing{})
	for range 2 {
		_, retry := AsRetryAfter(r.HandleJobRequest(ctx, req))
		require.True(t, retry, "a new window opened: the old one's start must not count")
	}
	require.Equal(t, StateScheduled, r.state(t, "j1"))
}
