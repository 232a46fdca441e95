package natsbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/engine/natsbus"
	"github.com/dispatchsim/dispatchsim/engine/natsbus/natsbustest"
	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"
)

// replicaConn is one process's connection to a server several share.
func replicaConn(t *testing.T, srv *natsbustest.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// Every replica keeps its own view of worker load: with several engine
// replicas on the reference topology, one heartbeat reaches each of them,
// while a submit goes to one.
func TestHeartbeatsReachEveryReplicaAndASubmitOne(t *testing.T) {
	ctx := context.Background()
	const replicas = 3
	srv := natsbustest.Start(t)
	var beats, submits [replicas]*deliveries
	for i := range replicas {
		beats[i], submits[i] = newDeliveries(ack), newDeliveries(ack)
		b := newBus(t, natsbus.Config{Conn: replicaConn(t, srv), Streams: natsbus.DefaultStreams()})
		subs := natsbus.EngineSubscriptions(nil)
		for j := range subs {
			switch subs[j].Subject {
			case engine.SubjectHeartbeat:
				subs[j].Handler = beats[i].handle
			default:
				subs[j].Handler = submits[i].handle
			}
		}
		require.NoError(t, b.SubscribeAll(ctx, subs))
	}
	worker := newBus(t, natsbus.Config{Conn: replicaConn(t, srv), Streams: natsbus.DefaultStreams()})
	require.NoError(t, worker.Publish(ctx, engine.SubjectHeartbeat, engine.Message{Data: []byte(`{"worker_id":"w1"}`)}))
	require.NoError(t, worker.Publish(ctx, engine.SubjectSubmit, engine.Message{ID: "submit:j1", Data: []byte(`{}`)}))
	require.Eventually(t, func() bool {
		n := 0
		for i := range replicas {
			n += submits[i].count()
			if beats[i].count() != 1 {
				return false
			}
		}
		return n == 1
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	n := 0
	for i := range replicas {
		require.Equal(t, 1, beats[i].count(), "replica %d's heartbeats", i+1)
		n += submits[i].count()
	}
	require.Equal(t, 1, n, "a submit goes to one replica")
}

// MaxDeliver -1 is unlimited, as documented: not read as the default 100.
func TestUnlimitedDeliveriesAreUnlimited(t *testing.T) {
	b := newBus(t, natsbus.Config{MaxDeliver: -1})
	const past = natsbus.DefaultMaxDeliver + 20
	d := newDeliveries(func(n int) error {
		if n < past {
			return &engine.RetryAfterError{Err: errors.New("again"), Delay: time.Millisecond}
		}
		return nil
	})
	require.NoError(t, b.Subscribe(context.Background(), natsbus.Subscription{Subject: "b", Queue: "q", Handler: d.handle}))
	publish(t, b, "b", "", "m")
	require.Eventually(t, func() bool { return d.count() == past }, 30*time.Second, 10*time.Millisecond)
}

// A replica that dies holding a delivery (no settle, no drain) hands it to
// another member of its queue once the ack wait has passed, and not before.
func TestARedeliveryPastTheAckWaitGoesToAnotherReplica(t *testing.T) {
	ctx := context.Background()
	const ackWait = 2 * time.Second
	srv := natsbustest.Start(t)
	dying := replicaConn(t, srv)
	first := newBus(t, natsbus.Config{Conn: dying, AckWait: ackWait})
	took, release := make(chan time.Time, 1), make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the bus's drain, which waits for the handler
	require.NoError(t, first.Subscribe(ctx, natsbus.Subscription{Subject: "b", Queue: "q",
		Handler: func(context.Context, []byte) error {
			took <- time.Now() // determinism-ok: a wall-clock test of the real broker
			<-release
			return nil
		}}))
	publish(t, first, "b", "", "m")
	var at time.Time
	select {
	case at = <-took:
	case <-time.After(5 * time.Second):
		t.Fatal("the first replica got no delivery")
	}
	dying.Close() // the process is gone: its delivery is neither acked nor NAKed

	other := newDeliveries(ack)
	second := newBus(t, natsbus.Config{Conn: replicaConn(t, srv), AckWait: ackWait})
	require.NoError(t, second.Subscribe(ctx, natsbus.Subscription{Subject: "b", Queue: "q", Handler: other.handle}))
	require.Eventually(t, func() bool { return other.count() == 1 }, 10*time.Second, 10*time.Millisecond)
	waited := other.start.Add(other.times()[0]).Sub(at)
	require.GreaterOrEqual(t, waited, ackWait-100*time.Millisecond, "redelivered before the ack wait ran out")
}

// The engine's own subscriptions, on two replicas sharing one store: a job
// submitted to either runs once, and both replicas' consumers are the
// queue's members (a layout right for one replica and wrong for several
// would give each its own copy).
func TestTwoEngineReplicasRunAJobOnce(t *testing.T) {
	ctx := context.Background()
	mr := miniredis.RunT(t)
	srv := natsbustest.Start(t)
	routing := engine.Routing{Topics: map[string][]string{"summarize": {"gpu"}}, Pools: map[string]engine.Pool{"gpu": {}}}
	var buses []*natsbus.Bus
	for range 2 {
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2})
		t.Cleanup(func() { _ = rdb.Close() })
		bus := newBus(t, natsbus.Config{Conn: replicaConn(t, srv), Streams: natsbus.DefaultStreams()})
		eng, err := engine.New(engine.Config{Redis: rdb, Bus: bus, Clock: engine.RealClock{}, Random: engine.CryptoRandom{},
			Routing: routing})
		require.NoError(t, err)
		require.NoError(t, bus.SubscribeAll(ctx, natsbus.EngineSubscriptions(eng)))
		buses = append(buses, bus)
	}
	worker := newBus(t, natsbus.Config{Conn: replicaConn(t, srv), Streams: natsbus.DefaultStreams()})
	ran := newDeliveries(ack)
	require.NoError(t, worker.Subscribe(ctx, natsbus.Subscription{Subject: engine.WorkerSubject("w1"), Queue: "w1",
		Handler: func(ctx context.Context, data []byte) error {
			var p engine.JobPacket
			if err := json.Unmarshal(data, &p); err != nil {
				return err
			}
			_ = ran.handle(ctx, data)
			return worker.Publish(ctx, engine.SubjectResult, message(t, engine.JobResult{JobID: p.JobID, WorkerID: "w1",
				Status: engine.ResultSucceeded, ResultPtr: "mem://out", DispatchGen: p.DispatchGen}))
		}}))
	hb := message(t, engine.Heartbeat{WorkerID: "w1", Pool: "gpu", MaxParallel: 4})
	require.NoError(t, worker.Publish(ctx, engine.SubjectHeartbeat, hb))
	time.Sleep(200 * time.Millisecond) // both replicas hear the worker
	for i, b := range buses {
		req := withID("submit:job-"+string(rune('a'+i)), message(t, engine.JobRequest{JobID: "job-" + string(rune('a'+i)), Topic: "summarize"}))
		require.NoError(t, b.Publish(ctx, engine.SubjectSubmit, req))
	}
	require.Eventually(t, func() bool { return ran.count() >= 2 }, 15*time.Second, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, 2, ran.count(), "each job ran once")
}
