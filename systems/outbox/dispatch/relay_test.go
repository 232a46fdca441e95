package dispatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The relay publishes an entry once under the dispatch's message id, marks it
// sent and moves the job to RUNNING; the next tick publishes nothing.
func TestRelayPublishesOnceAndMarksSent(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	r.submit(t, "j1")
	job := r.job(t, "j1")

	require.Equal(t, 1, r.relay(t))
	msgs := env.bus.to(WorkerSubject("w1"))
	require.Len(t, msgs, 1)
	require.Equal(t, "jobreq:j1", msgs[0].ID)
	pkt := packetOf(t, msgs[0])
	require.Equal(t, job.DispatchID, pkt.DispatchID)
	require.Equal(t, 1, pkt.Attempt)
	require.Equal(t, []byte("p-j1"), pkt.Payload)

	require.Equal(t, StateRunning, r.state(t, "j1"))
	require.EqualValues(t, 0, r.pending(t))
	entry, err := r.store.Entry(ctx, job.DispatchID)
	require.NoError(t, err)
	require.NotEmpty(t, entry["sent_at"])
	require.Positive(t, env.mr.TTL(EntryKey(job.DispatchID)), "a sent entry is kept for audit, then expires")

	require.Equal(t, 0, r.relay(t))
	env.clock.Advance(DefaultRelayLease)
	require.Equal(t, 0, r.relay(t))
	require.Len(t, env.bus.to("worker."), 1)
}

// A failed publish changes no state: the entry stays, is skipped while its
// lease holds, and a later tick publishes it under the same message id.
func TestRelayRetriesFailedPublishUnderSameMessageID(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	r.submit(t, "j1")
	env.bus.failNext("worker.", 1)

	n, err := r.RelayOnce(ctx)
	require.Error(t, err)
	require.Equal(t, 0, n)
	require.Equal(t, StateDispatched, r.state(t, "j1"), "nothing to roll back")
	require.EqualValues(t, 1, r.pending(t))
	require.Equal(t, 1.0, r.counter(t, "outbox_relay_publish_failed_total", "dispatch"))

	require.Equal(t, 0, r.relay(t), "the lease still holds")
	env.clock.Advance(DefaultRelayLease)
	require.Equal(t, 1, r.relay(t))
	msgs := env.bus.to("worker.")
	require.Len(t, msgs, 1)
	require.Equal(t, "jobreq:j1", msgs[0].ID)
	require.Equal(t, StateRunning, r.state(t, "j1"))
	require.Equal(t, 1.0, r.counter(t, "outbox_relay_republished_total", "dispatch"))
}

// A relay that dies between the publish and the mark-sent (here: the mark-sent
// write fails) leaves the entry; once the lease runs out it is published
// again, same message id and same packet. The broker's de-duplication window
// drops the copy when it lands inside the window; otherwise the worker's
// Consumer does: the dispatch id is accepted once.
func TestCrashBetweenPublishAndMarkSentRepublishesSameMessage(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	r.submit(t, "j1")
	env.hook.failScript(markSentScript, false, 1)

	n, err := r.RelayOnce(ctx)
	require.ErrorIs(t, err, errInjected)
	require.Equal(t, 1, n)
	require.Equal(t, StateDispatched, r.state(t, "j1"))
	require.EqualValues(t, 1, r.pending(t))

	env.clock.Advance(DefaultRelayLease)
	require.Equal(t, 1, r.relay(t))
	msgs := env.bus.to("worker.")
	require.Len(t, msgs, 2, "at least once: the entry went out twice")
	require.Equal(t, msgs[0], msgs[1], "same message id, same packet")
	require.Equal(t, StateRunning, r.state(t, "j1"))
	require.EqualValues(t, 0, r.pending(t))

	c, err := NewConsumer(env.rdb, ConsumerConfig{})
	require.NoError(t, err)
	executions := 0
	for _, m := range msgs {
		first, err := c.Accept(ctx, packetOf(t, m).DispatchID)
		require.NoError(t, err)
		if first {
			executions++
		}
	}
	require.Equal(t, 1, executions)
}

// Two relays (two replicas) never both publish one entry inside a lease:
// while the first holds its claim (here, mid-publish) the second finds
// nothing to claim. After the lease of a relay whose publish failed, the
// other relay takes the entry over.
func TestTwoRelaysDoNotBothPublishInsideLease(t *testing.T) {
	env := newTestEnv(t)
	a, b := env.replica(t), env.replica(t)
	a.submit(t, "j1")

	inner := -1
	env.bus.onPublish = func(string, Message) {
		if inner < 0 {
			inner = 0 // b's own publishes do not recurse
			inner = b.relay(t)
		}
	}
	require.Equal(t, 1, a.relay(t))
	require.Equal(t, 0, inner, "b claimed nothing while a held the lease")
	require.Len(t, env.bus.to("worker."), 1)

	env.bus.onPublish = nil
	a.submit(t, "j2")
	env.bus.failNext("worker.", 1)
	_, err := a.RelayOnce(ctx)
	require.Error(t, err)
	env.clock.Advance(DefaultRelayLease / 2)
	require.Equal(t, 0, b.relay(t), "half the lease later a's claim still holds")
	env.clock.Advance(DefaultRelayLease / 2)
	require.Equal(t, 1, b.relay(t), "after the lease, another relay takes the entry over")
	require.Equal(t, 0, a.relay(t))
	require.Len(t, env.bus.to("worker."), 2)
}

// A dispatch whose job turned terminal before the relay reached it (a cancel,
// a timeout, or a result after a publish whose mark-sent was lost) is dropped,
// never published (again).
func TestRelayDropsDispatchOfTerminalJob(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	r.submit(t, "j1")
	require.NoError(t, r.HandleCancel(ctx, CancelRequest{JobID: "j1"}))
	require.Equal(t, 0, r.relay(t))
	require.Empty(t, env.bus.to("worker."))
	require.EqualValues(t, 0, r.pending(t))
	require.Equal(t, 1.0, r.counter(t, "outbox_entries_dropped_total", "terminal"))

	r.submit(t, "j2")
	env.hook.failScript(markSentScript, false, 1)
	require.Equal(t, 1, r.relay(t))
	require.NoError(t, r.HandleJobResult(ctx, JobResult{JobID: "j2", WorkerID: "w1", Status: ResultSucceeded}))
	env.clock.Advance(DefaultRelayLease)
	require.Equal(t, 0, r.relay(t), "the job is done: the lost mark-sent costs no second publish")
	require.Len(t, env.bus.to("worker."), 1)
	require.Equal(t, StateSucceeded, r.state(t, "j2"))
}
