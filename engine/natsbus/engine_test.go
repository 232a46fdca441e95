package natsbus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/engine/natsbus"
	"github.com/dispatchsim/dispatchsim/engine/natsbus/natsbustest"
	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"
)

// The real engine, on the wall clock, takes a job through JetStream: the
// submit to a scheduler replica, the dispatch to the worker's subject, the
// worker's result back, and the job ends SUCCEEDED.
func TestEngineRunsAJobThroughJetStream(t *testing.T) {
	ctx := context.Background()
	nc := natsbustest.Connect(t)
	bus := newBus(t, natsbus.Config{Conn: nc, Streams: natsbus.DefaultStreams()})
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2})
	t.Cleanup(func() { _ = rdb.Close() })

	eng, err := engine.New(engine.Config{Redis: rdb, Bus: bus, Clock: engine.RealClock{}, Random: engine.CryptoRandom{},
		Routing: engine.Routing{Topics: map[string][]string{"summarize": {"gpu"}}, Pools: map[string]engine.Pool{"gpu": {}}}})
	require.NoError(t, err)
	require.NoError(t, bus.SubscribeAll(ctx, natsbus.EngineSubscriptions(eng)))

	worker := newBus(t, natsbus.Config{Conn: nc, Streams: natsbus.DefaultStreams()})
	got := make(chan engine.JobPacket, 1)
	require.NoError(t, worker.Subscribe(ctx, natsbus.Subscription{Subject: engine.WorkerSubject("w1"), Queue: "w1",
		Handler: natsbus.JSON(func(ctx context.Context, p engine.JobPacket) error {
			got <- p
			return worker.Publish(ctx, engine.SubjectResult, message(t, engine.JobResult{JobID: p.JobID, WorkerID: "w1",
				Status: engine.ResultSucceeded, ResultPtr: "mem://out", DispatchGen: p.DispatchGen}))
		})}))
	require.NoError(t, worker.Publish(ctx, engine.SubjectHeartbeat,
		message(t, engine.Heartbeat{WorkerID: "w1", Pool: "gpu", MaxParallel: 4})))
	require.NoError(t, bus.Publish(ctx, engine.SubjectSubmit,
		withID("submit:job-1", message(t, engine.JobRequest{JobID: "job-1", Topic: "summarize"}))))

	select {
	case p := <-got:
		require.Equal(t, "job-1", p.JobID)
	case <-time.After(10 * time.Second):
		t.Fatal("the worker got no dispatch")
	}
	require.Eventually(t, func() bool {
		st, err := eng.Store().GetState(ctx, "job-1")
		return err == nil && st == engine.StateSucceeded
	}, 10*time.Second, 20*time.Millisecond)
	job, err := eng.Store().Get(ctx, "job-1")
	require.NoError(t, err)
	require.Equal(t, "mem://out", job.ResultPtr)
	require.NoError(t, bus.Drain(ctx))
	require.NoError(t, worker.Drain(ctx))
}

func message(t *testing.T, v any) engine.Message {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return engine.Message{Data: b}
}

func withID(id string, m engine.Message) engine.Message {
	m.ID = id
	return m
}
