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
	"github.com/dispatchsim/dispatchsim/sim/kernel"
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

// Two copies of one dispatch delivered at once: the second arrives while the
// first waits on the system's gate (a store call, a yield). The worker's
// in-memory mark is taken before the gate, so exactly one runs, whatever
// order the scheduler picks; the other is skipped as a duplicate.
func TestCopiesDeliveredAtOnceRunOnce(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		sys := cordum.System{}
		env, _, trace := kerneltest.NewEnv(t, seed, true, sys.Observer())
		s := store.New(env, sys.Spec(sut.Options{}))
		b := bus.New(env, history.BusConfig{})
		fleet := New(env, b, s, sys.Worker(), []Spec{{ID: "w1", Pool: "general", MaxParallel: 4}}, Profile{})
		fleet.Start()
		k := env.Kernel
		data, err := json.Marshal(engine.JobPacket{JobID: "j-1", Topic: "default", DispatchGen: 1, DispatchID: "d-1"})
		require.NoError(t, err)
		k.Spawn("replica-1", "dispatched-write", func(ctx context.Context) {
			require.NoError(t, s.Client("replica-1").HSet(ctx, "job:j-1", "state", "DISPATCHED", "dispatch_gen", 1).Err())
		})
		for _, replica := range []string{"replica-1", "replica-2"} { // two publishers, one message each
			k.At(time.Second, func() {
				k.Spawn(replica, "dispatch", func(ctx context.Context) {
					_ = b.Publisher(replica).Publish(ctx, sys.Worker().Subject("w1"), sut.Message{Data: data})
				})
			})
		}
		require.NoError(t, k.Run(time.Minute, nil))
		s.Close()

		require.Len(t, env.History.Executions, 1, "seed %d", seed)
		require.Contains(t, string(trace.Bytes()), "worker skips duplicate j-1/1", "seed %d", seed)
	}
}

// failFirstGateRead fails the worker's first store command (its gate's
// read) before it is applied.
type failFirstGateRead struct{ fired bool }

func (f *failFirstGateRead) At(p *kernel.Point) (kernel.Fault, bool) {
	if f.fired || p.Kind != history.PointRedis || p.Group != "worker-w1" {
		return kernel.Fault{}, false
	}
	f.fired = true
	return kernel.Fault{Kind: "WorkerStoreFails", Effect: history.EffectFailBeforeApply}, true
}

// A gate that cannot answer gives the mark back: the copy it NAKed, or the
// one skipped while it asked, is not lost; the dispatch still runs once.
func TestAGateErrorGivesTheMarkBack(t *testing.T) {
	sys := cordum.System{}
	env, host, trace := kerneltest.NewEnv(t, 1, true, sys.Observer())
	inj := &failFirstGateRead{}
	host.Injector = inj
	s := store.New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	b := bus.New(env, history.BusConfig{})
	fleet := New(env, b, s, sys.Worker(), []Spec{{ID: "w1", Pool: "general", MaxParallel: 4}}, Profile{})
	fleet.Start()
	k := env.Kernel
	data, err := json.Marshal(engine.JobPacket{JobID: "j-1", Topic: "default", DispatchGen: 1, DispatchID: "d-1"})
	require.NoError(t, err)
	k.Spawn("replica-1", "dispatched-write", func(ctx context.Context) {
		require.NoError(t, s.Client("replica-1").HSet(ctx, "job:j-1", "state", "DISPATCHED", "dispatch_gen", 1).Err())
	})
	k.At(time.Second, func() {
		k.Spawn("replica-1", "dispatch", func(ctx context.Context) {
			_ = b.Publisher("replica-1").Publish(ctx, sys.Worker().Subject("w1"), sut.Message{Data: data})
		})
	})
	require.NoError(t, k.Run(time.Minute, nil))
	require.True(t, inj.fired, "the gate's read failed")
	require.Len(t, env.History.Executions, 1, "the NAKed copy came back and ran:\n%s", trace.Bytes())
}
