package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel/kerneltest"
	"github.com/dispatchsim/dispatchsim/sim/store"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// A worker runs a (job, generation) once however often it is delivered,
// reports the result, and after a crash comes back with its memory of what it
// ran empty: the same dispatch runs again. No world is assembled: the fleet
// needs only an Env, a bus and a store.
func TestWorkerRunsADispatchOncePerLifetime(t *testing.T) {
	sys := cordum.System{}
	env, _, _ := kerneltest.NewEnv(t, 1, false, sys.Observer())
	s := store.New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	b := bus.New(env, history.BusConfig{})
	fleet := New(env, b, s, sys.Worker(), []Spec{{ID: "w1", Pool: "general", MaxParallel: 2}}, Profile{})
	fleet.Start()
	k := env.Kernel
	data, err := json.Marshal(engine.JobPacket{JobID: "j-1", Topic: "default", DispatchGen: 1, DispatchID: "d-1"})
	require.NoError(t, err)
	deliverAt := func(at time.Duration) {
		k.At(at, func() {
			k.Spawn("replica-1", "dispatch", func(ctx context.Context) {
				_ = b.Publisher("replica-1").Publish(ctx, sys.Worker().Subject("w1"), sut.Message{Data: data})
			})
		})
	}
	// The job as the engine wrote it before publishing: the worker's fence
	// runs only a dispatch the store still names current.
	k.Spawn("replica-1", "dispatched-write", func(ctx context.Context) {
		require.NoError(t, s.Client("replica-1").HSet(ctx, "job:j-1", "state", "DISPATCHED", "dispatch_gen", 1).Err())
	})
	deliverAt(time.Second)
	deliverAt(2 * time.Second) // a duplicate delivery
	k.At(time.Minute, func() { fleet.Crash(0) })
	deliverAt(2 * time.Minute) // after the restart (30s)
	require.NoError(t, k.Run(5*time.Minute, nil))

	h := env.History
	require.Len(t, h.Executions, 2, "once before the crash, once after")
	require.Len(t, h.Reports, 2)
	require.Equal(t, string(sut.Succeeded), h.Reports[0].Outcome)
	require.Len(t, h.Faults, 1)
	require.Equal(t, "DriverCrash", h.Faults[0].Kind)
	require.Equal(t, 1, fleet.Len())
	require.False(t, k.Group("worker-w1").Crashed(), "restarted")
}

// Each execution records when it stopped: its work done (before the report,
// which names its message's bytes), or its worker crashed mid-job.
func TestWorkerRecordsWhenEachExecutionStopped(t *testing.T) {
	sys := cordum.System{}
	env, _, _ := kerneltest.NewEnv(t, 1, false, sys.Observer())
	s := store.New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	b := bus.New(env, history.BusConfig{})
	fleet := New(env, b, s, sys.Worker(), []Spec{{ID: "w1", Pool: "general", MaxParallel: 2}},
		Profile{JobDurationMin: 10 * time.Second, JobDurationMax: 10 * time.Second})
	fleet.Start()
	k := env.Kernel
	for i, at := range []time.Duration{time.Second, 20 * time.Second} {
		job := fmt.Sprintf("j-%d", i+1)
		data, err := json.Marshal(engine.JobPacket{JobID: job, Topic: "default", DispatchID: "d-" + job})
		require.NoError(t, err)
		k.At(at, func() {
			k.Spawn("replica-1", "dispatch", func(ctx context.Context) {
				require.NoError(t, s.Client("replica-1").HSet(ctx, "job:"+job, "state", "DISPATCHED", "dispatch_gen", 0).Err())
				_ = b.Publisher("replica-1").Publish(ctx, sys.Worker().Subject("w1"), sut.Message{Data: data})
			})
		})
	}
	k.At(25*time.Second, func() { fleet.Crash(0) })
	require.NoError(t, k.Run(time.Minute, nil))

	h := env.History
	require.Len(t, h.Executions, 2)
	done, crashed := h.Executions[0], h.Executions[1]
	require.Equal(t, done.Time+10*time.Second, done.End)
	require.False(t, done.Crashed)
	require.Greater(t, done.EndStep, done.Step)
	require.Equal(t, 25*time.Second, crashed.End)
	require.True(t, crashed.Crashed)
	require.Greater(t, crashed.EndStep, crashed.Step)

	require.Len(t, h.Reports, 1, "the crashed job never reported")
	_, msg := sys.Worker().Result(sut.Dispatch{JobID: "j-1", ID: "d-j-1"}, "w1", sut.Succeeded)
	require.Equal(t, history.MessageDigest(msg.Data), h.Reports[0].Message)
}
