package traffic

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/bus"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
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

// storeGateway writes each job straight to the store, as a gateway without
// a bus hop does; it publishes nothing.
type storeGateway struct{ rdb *redis.Client }

func (g storeGateway) Submit(ctx context.Context, j sut.Job) error {
	return g.rdb.HSet(ctx, "job:"+j.ID, "state", "QUEUED", "version", 1).Err()
}
func (storeGateway) Cancel(context.Context, string) error { return nil }
func (storeGateway) Status(context.Context, string) (string, error) {
	return "", sut.ErrNotFound
}

// A submit the gateway wrote to the store itself is accepted too: the store
// committed the job, though the broker never saw it.
func TestASubmitStoredByTheGatewayIsAccepted(t *testing.T) {
	env, _, _ := kerneltest.NewEnv(t, 4, false, cordum.System{}.Observer())
	s := store.New(env, sut.Spec{})
	t.Cleanup(s.Close)
	c := New(env, s, storeGateway{rdb: s.Client("clients")}, Workload{Jobs: 3}.WithDefaults(), time.Minute)
	c.Plan()
	require.NoError(t, env.Kernel.Run(10*time.Minute, nil))
	require.Empty(t, env.History.Publishes)
	require.Len(t, env.History.Submitted, 3)
	for _, j := range env.History.Submitted {
		require.True(t, j.Accepted, j.JobID)
	}
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

// Run clients over two orgs and three workflows: the registrations that must
// fail do, keys reused for another intent are refused as a mismatch once
// their key has its run, each invalid request gets the status the system's
// limits promise, before anything is stored, starts without a key each get
// a run (org-2 has no limit), and keys holding another writer's value are
// refused as used.
func TestRunClientsAcrossOrgsReuseKeysAndSendInvalidRequests(t *testing.T) {
	env, _, _ := kerneltest.NewEnv(t, 7, false, cordum.System{}.Observer())
	sys := cordum.System{}
	spec := sys.Spec(sut.Options{})
	s := store.New(env, spec)
	t.Cleanup(s.Close)
	k := env.Kernel
	gw, err := sys.StartGateway(sut.Ports{Redis: s.Client("gateway"), Bus: bus.New(env, history.BusConfig{}).Publisher("clients"),
		Clock: k.NewClock("gateway", 0), Random: env.Seeds.Child("gateway"), Registerer: prometheus.NewRegistry(),
		Spawn: k.Spawner("gateway")}, sut.Options{RunLimit: 5})
	require.NoError(t, err)
	wl := Workload{Jobs: 1, Runs: 16, RunKeys: 3, RunOrgs: 2, RunWorkflows: 3, RunReuse: 0.5, RunInvalid: 5,
		RunsWithoutKey: 3, RunUnlimitedOrgs: 1, RunForeignKeys: 5}.WithDefaults()
	c := New(env, s, gw, wl, time.Minute)
	c.HoldTo(spec.RunRequests)
	c.Plan()
	require.NoError(t, k.Run(10*time.Minute, nil))
	require.Zero(t, c.Pending())

	var registered, setup []string
	replies := map[string]int{}
	mismatches, unkeyed := 0, 0
	for _, op := range env.History.Ops {
		switch op.Kind {
		case history.OpRegisterWorkflow:
			registered = append(registered, op.Org+"/"+op.Workflow+"="+op.Output)
		case history.OpSetRunLimit, history.OpPlantRunKey:
			setup = append(setup, string(op.Kind)+" "+op.Key+"="+op.Output)
		case history.OpStartRun:
			if strings.HasPrefix(op.Key, "legacy-") {
				require.Equal(t, []any{409, sut.RunUsed}, []any{op.Status, op.Output}, "another writer's value is never resolved")
				continue
			}
			if op.Key == "" {
				require.Equal(t, 200, op.Status, "no limit for org-2, room for org-1's")
				unkeyed++
				continue
			}
			if strings.HasPrefix(op.Key, "key-") {
				require.NotZero(t, op.Status, "no faults: every start is answered")
				if op.Output == sut.RunMismatch {
					mismatches++
				}
				continue
			}
			what := op.Org + "/" + op.Workflow
			if op.InputBytes > spec.RunRequests.MaxBodyBytes {
				what = "oversized"
				require.Less(t, len(op.Input), 300, "the history keeps the start of a large body")
			}
			if len(op.Key) > spec.RunRequests.MaxKeyBytes {
				what = "long key"
			}
			if op.Input[0] == '[' {
				what = "array"
			}
			replies[what] = op.Status
		}
	}
	require.Equal(t, []string{"org-1/wf-1=ok", "org-2/wf-2=ok", "org-1/wf-3=ok", "org-2/wf-1=conflict", "org-1/wf-1=ok",
		"/wf-1=invalid", "org-1/=invalid"}, registered)
	require.Equal(t, map[string]int{"/wf-1": 400, "array": 400, "oversized": 413, "long key": 400, "org-2/wf-1": 404}, replies)
	require.Positive(t, mismatches, "a key reused for another intent after its run exists")
	require.Equal(t, 3, unkeyed)
	require.Equal(t, []string{"plant_run_key legacy-1=ok", "plant_run_key legacy-2=ok", "plant_run_key legacy-3=ok",
		"plant_run_key legacy-4=ok", "plant_run_key legacy-5=ok", "set_run_limit org-2=ok"}, setup)
	require.Equal(t, map[string]string{"wf-1": "org-1", "wf-2": "org-2", "wf-3": "org-1"}, c.Admission().Workflows)
	wrote := 0
	for _, cmd := range env.History.RunKeys {
		if cmd.Op == history.RunKeyWrite {
			require.True(t, strings.HasPrefix(cmd.Key, "legacy-"), "only the planted values")
			continue
		}
		require.Equal(t, history.RunKeyReserve, cmd.Op, "no 429, no crash, no stale reservation: only reservations")
		require.False(t, cmd.Replaced() || cmd.Removed(), "a reservation binds a free key or finds it bound")
		if cmd.Wrote() {
			wrote++
		}
	}
	require.Equal(t, 3, wrote, "each key bound once; no invalid request reached the store")
}

// replyFaults fires at the client points: j-1's first reply is lost, and
// j-2's client sends it again late.
type replyFaults struct{ asked map[string]int }

func (r *replyFaults) At(p *kernel.Point) (kernel.Fault, bool) {
	if p.Kind != history.PointClient {
		return kernel.Fault{}, false
	}
	r.asked[p.JobID]++
	switch {
	case p.JobID == "j-1" && r.asked[p.JobID] == 1:
		return kernel.Fault{Kind: "SubmitReplyLost", Effect: history.EffectReplyLostAfterApply}, true
	case p.JobID == "j-2":
		return kernel.Fault{Kind: "SubmitRetriedLate", Effect: history.EffectDelay, Duration: 10 * time.Minute}, true
	}
	return kernel.Fault{}, false
}

// At the point between a submit the gateway applied and its reply: a lost
// reply is an error to the client, which sends the submit again a second
// later; a late retry comes once more, cut to the de-duplication window the
// system promises. Every send is recorded, the first at the submit's time.
func TestALostReplyAndALateRetrySendTheSubmitAgain(t *testing.T) {
	env, host, _ := kerneltest.NewEnv(t, 4, false, cordum.System{}.Observer())
	host.Injector = &replyFaults{asked: map[string]int{}}
	s := store.New(env, sut.Spec{})
	t.Cleanup(s.Close)
	c := New(env, s, gateway{pub: bus.New(env, history.BusConfig{}).Publisher("clients")}, Workload{Jobs: 3}.WithDefaults(),
		time.Minute)
	c.RetryWithin(30 * time.Second)
	c.Plan()
	require.NoError(t, env.Kernel.Run(10*time.Minute, nil))
	sends := map[string][]time.Duration{}
	for _, j := range env.History.Submitted {
		require.Equal(t, j.At, j.Attempts[0], j.JobID)
		sends[j.JobID] = j.Attempts
	}
	require.Len(t, sends["j-1"], 2, "the lost reply's retry")
	require.Equal(t, time.Second, sends["j-1"][1]-sends["j-1"][0])
	require.Len(t, sends["j-2"], 2, "the late retry")
	require.Equal(t, 30*time.Second, sends["j-2"][1]-sends["j-2"][0], "cut to the window")
	require.Len(t, sends["j-3"], 1)
	var ops []string
	for _, op := range env.History.Ops {
		ops = append(ops, op.Key+" "+op.Output)
	}
	require.ElementsMatch(t, []string{"j-1 ok", "j-2 ok", "j-3 ok"}, ops, "each submit landed in the end")
}
