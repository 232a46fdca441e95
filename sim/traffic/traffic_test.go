package traffic

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel/kerneltest"
	"github.com/dispatchsim/dispatchsim/sim/store"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// gateway publishes every submit and knows no job: the least a system's
// gateway does, so the test sees only what the clients do with it.
type gateway struct{ pub sut.Bus }

func (g gateway) Submit(ctx context.Context, j sut.Job) error {
	return g.pub.Publish(ctx, "jobs", sut.Message{ID: "jobreq:" + j.ID, Data: []byte(`{"job_id":"` + j.ID + `"}`)})
}
func (gateway) Cancel(context.Context, string) error { return nil }
func (gateway) Status(context.Context, string) (string, error) {
	return "", sut.ErrNotFound
}

// The planned clients submit, cancel and read, each recorded with its call
// and return; a submit the broker stored counts as accepted, and the store
// counts the job unfinished until it holds a terminal state. A driver's
// client is numbered after every planned one.
func TestClientsRecordOperationsAndAcceptedJobs(t *testing.T) {
	env, _, _ := kerneltest.NewEnv(t, 4, false, cordum.System{}.Observer())
	s := store.New(env, sut.Spec{}) // nothing is stored: no state is ever terminal
	t.Cleanup(s.Close)
	gw := gateway{pub: bus.New(env, history.BusConfig{}).Publisher("clients")}
	c := New(env, s, gw, Workload{Jobs: 3, StatusReads: 2, CancelRate: 1}.WithDefaults(), time.Minute)
	c.Plan()
	require.Equal(t, 3+3+2, c.Pending(), "three submits, three cancels, two reads")
	require.NoError(t, env.Kernel.Run(10*time.Minute, nil))
	require.Zero(t, c.Pending())

	h := env.History
	kinds := map[history.OpKind]int{}
	for _, op := range h.Ops {
		kinds[op.Kind]++
		require.GreaterOrEqual(t, op.Return, op.Call)
	}
	require.Equal(t, map[history.OpKind]int{history.OpSubmit: 3, history.OpCancel: 3, history.OpStatus: 2}, kinds)
	require.Len(t, h.Submitted, 3)
	for _, j := range h.Submitted {
		require.True(t, j.Accepted, j.JobID)
	}
	require.Equal(t, 3, s.Unfinished(), "accepted, never stored")

	id := c.Submit("default")
	require.Equal(t, "x-6", id, "clients 0-2 submit, 3-4 read: the driver's first is 6")
	require.NoError(t, env.Kernel.Run(20*time.Minute, nil))
	require.Len(t, h.Submitted, 4)
}

// planned runs a workload's clients to the end and returns what they
// submitted, in submit order.
func planned(t *testing.T, wl Workload) []history.SubmittedJob {
	env, _, _ := kerneltest.NewEnv(t, 7, false, cordum.System{}.Observer())
	s := store.New(env, sut.Spec{})
	t.Cleanup(s.Close)
	c := New(env, s, gateway{pub: bus.New(env, history.BusConfig{}).Publisher("clients")}, wl.WithDefaults(), time.Minute)
	c.Plan()
	require.NoError(t, env.Kernel.Run(10*time.Minute, nil))
	return env.History.Submitted
}

// Tenants and topic-less requests come from their own PRNG: a workload that
// adds them submits the same jobs at the same times, and those it leaves
// valid on the same topics.
func TestTenantsAndInvalidRequestsLeaveTheOtherDrawsAlone(t *testing.T) {
	wl := Workload{Jobs: 40, Topics: []string{"default", "gpu", "batch"}}
	plain := planned(t, wl)
	wl.Tenants, wl.InvalidRate = 3, 0.2
	mixed := planned(t, wl)
	require.Len(t, mixed, len(plain))
	tenants, invalid := map[string]int{}, 0
	for i, j := range mixed {
		p := plain[i]
		require.Equal(t, p.JobID, j.JobID)
		require.Equal(t, p.At, j.At, j.JobID)
		require.Empty(t, p.Tenant)
		tenants[j.Tenant]++
		if j.Topic == "" {
			invalid++
			require.Empty(t, j.Requires, "a request without a topic requires nothing")
			continue
		}
		require.Equal(t, p.Topic, j.Topic, j.JobID)
		require.Equal(t, p.Requires, j.Requires, j.JobID)
	}
	require.Len(t, tenants, 3, "every tenant draws jobs: %v", tenants)
	require.NotContains(t, tenants, "")
	require.Positive(t, invalid)
	require.Less(t, invalid, 20)
}
