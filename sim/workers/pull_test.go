package workers

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel/kerneltest"
	"github.com/dispatchsim/dispatchsim/sim/store"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// listProtocol is a small pulling protocol: a pool's work is a list of
// "job/gen" items a worker pops, and each item it finished goes into a set.
type listProtocol struct{}

func (listProtocol) Subject(string) string { return "" }
func (listProtocol) DecodeDispatch([]byte) (sut.Dispatch, error) {
	return sut.Dispatch{}, errors.New("nothing is pushed")
}
func (listProtocol) Result(d sut.Dispatch, worker string, o sut.Outcome) (string, sut.Message) {
	return "results", sut.Message{Data: []byte(d.ID + " " + worker + " " + string(o))}
}
func (listProtocol) Heartbeat(hb sut.Heartbeat) (string, sut.Message) {
	return "heartbeat", sut.Message{Data: []byte(hb.WorkerID)}
}

func (listProtocol) Puller(p sut.Ports, w sut.PullWorker) (sut.Pull, error) {
	return listPull{rdb: p.Redis, key: "work:" + w.Pool}, nil
}

type listPull struct {
	rdb redis.UniversalClient
	key string
}

func (l listPull) Next(ctx context.Context, n int) ([]sut.Dispatch, error) {
	items, err := l.rdb.LPopCount(ctx, l.key, n).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	var out []sut.Dispatch
	for _, it := range items {
		job, g, _ := strings.Cut(it, "/")
		gen, _ := strconv.Atoi(g)
		out = append(out, sut.Dispatch{JobID: job, Gen: gen, ID: it})
	}
	return out, err
}

func (l listPull) Done(ctx context.Context, d sut.Dispatch) error {
	return l.rdb.SAdd(ctx, "done", d.ID).Err()
}

func (listPull) Idle() time.Duration { return time.Second }

// A worker whose protocol pulls subscribes to nothing: it pops work from the
// store while it has room (two at a time here), runs each item as a
// delivered dispatch runs (the execution and the report recorded), and
// acknowledges it through the pull only after its result was sent. A crash
// mid-job leaves that item unacknowledged, and the restarted worker pulls
// what came meanwhile.
func TestAPullingWorkerRunsWhatItPullsAndAcknowledgesItAfterItsResult(t *testing.T) {
	sys := cordum.System{}
	env, _, trace := kerneltest.NewEnv(t, 1, true, sys.Observer())
	s := store.New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	b := bus.New(env, history.BusConfig{})
	fleet := New(env, b, s, listProtocol{}, []Spec{{ID: "w1", Pool: "general", MaxParallel: 2}},
		Profile{JobDurationMin: 10 * time.Second, JobDurationMax: 10 * time.Second})
	fleet.Start()
	k := env.Kernel
	push := func(at time.Duration, items ...any) {
		k.At(at, func() {
			k.Spawn("gateway", "push", func(ctx context.Context) {
				require.NoError(t, s.Client("gateway").RPush(ctx, "work:general", items...).Err())
			})
		})
	}
	push(time.Second, "j-1/1", "j-2/1", "j-3/1")
	k.At(25*time.Second, func() { fleet.Crash(0) }) // j-3 runs from about 11s to 21s: j-4 is the crash's
	push(22*time.Second, "j-4/1")
	push(40*time.Second, "j-5/1") // the worker is back at 55s
	require.NoError(t, k.Run(2*time.Minute, nil))

	h := env.History
	var ran []string
	for _, e := range h.Executions {
		ran = append(ran, e.JobID)
		if e.JobID == "j-4" {
			require.True(t, e.Crashed, "j-4 ended in the crash")
		}
	}
	require.Len(t, ran, 5)
	require.ElementsMatch(t, []string{"j-1", "j-2"}, ran[:2], "pulled together")
	require.Equal(t, []string{"j-3", "j-4", "j-5"}, ran[2:], "then one at a time as room frees")
	require.Equal(t, h.Executions[0].Time, h.Executions[1].Time, "j-1 and j-2 pulled together")
	require.GreaterOrEqual(t, h.Executions[2].Time, h.Executions[0].End, "j-3 waits for room")
	require.GreaterOrEqual(t, h.Executions[4].Time, 55*time.Second, "j-5 after the restart")
	require.Len(t, h.Reports, 4, "the crashed j-4 never reported")

	var done []string
	k.Spawn("gateway", "read", func(ctx context.Context) {
		done, _ = s.Client("gateway").SMembers(ctx, "done").Result()
	})
	require.NoError(t, k.Run(3*time.Minute, nil))
	require.ElementsMatch(t, []string{"j-1/1", "j-2/1", "j-3/1", "j-5/1"}, done, "acknowledged after the result, the crashed one never")
	require.Contains(t, string(trace.Bytes()), "worker pulled j-5/1")
}

// gatedListProtocol is listProtocol with an idempotent consumer that
// refuses j-2 (it ran before) and cannot answer for j-3.
type gatedListProtocol struct{ listProtocol }

func (gatedListProtocol) Consumer(sut.Ports) (sut.DispatchGate, error) { return listGate{}, nil }

type listGate struct{}

func (listGate) First(_ context.Context, d sut.Dispatch) (bool, error) {
	switch d.JobID {
	case "j-2":
		return false, nil
	case "j-3":
		return false, errors.New("the store is unsure")
	}
	return true, nil
}

// A pulled dispatch the consumer refuses ran before: it is acknowledged at
// once and not run. One the consumer cannot answer for is neither run nor
// acknowledged: it stays pending for the system to hand out again.
func TestAPulledDispatchTheGateRefusesIsDoneAndOneItIsUnsureOfIsLeft(t *testing.T) {
	sys := cordum.System{}
	env, _, _ := kerneltest.NewEnv(t, 1, false, sys.Observer())
	s := store.New(env, sys.Spec(sut.Options{}))
	t.Cleanup(s.Close)
	b := bus.New(env, history.BusConfig{})
	fleet := New(env, b, s, gatedListProtocol{}, []Spec{{ID: "w1", Pool: "general", MaxParallel: 4}}, Profile{})
	fleet.Start()
	k := env.Kernel
	k.At(time.Second, func() {
		k.Spawn("gateway", "push", func(ctx context.Context) {
			require.NoError(t, s.Client("gateway").RPush(ctx, "work:general", "j-1/1", "j-2/1", "j-3/1").Err())
		})
	})
	require.NoError(t, k.Run(time.Minute, nil))
	var done []string
	k.Spawn("gateway", "read", func(ctx context.Context) {
		done, _ = s.Client("gateway").SMembers(ctx, "done").Result()
	})
	require.NoError(t, k.Run(2*time.Minute, nil))

	require.Len(t, env.History.Executions, 1)
	require.Equal(t, "j-1", env.History.Executions[0].JobID)
	require.ElementsMatch(t, []string{"j-1/1", "j-2/1"}, done)
}
