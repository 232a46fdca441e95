package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

func TestWorldRunsJobsToTheEndWithoutFaults(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 1, KeepTrace: true})
	res := w.Run()
	require.NoError(t, res.Err)
	succeeded := 0
	for _, job := range res.Final {
		if job.State == w.Spec().Succeeded {
			succeeded++
		}
	}
	require.Equal(t, 50, succeeded, "trace tail:\n%s", kernel.Tail(w.Trace().Bytes(), 40))
	require.Len(t, res.History.Executions, 50)
	// Each committed change carries the record it left (its dispatch and
	// result), and each execution stopped before the run did.
	last := map[string]int{}
	for i, s := range res.History.States {
		last[s.JobID] = i
	}
	for id, i := range last {
		s, f := res.History.States[i], res.Final[id]
		require.Equal(t, []any{f.Gen, f.DispatchID, f.ResultPtr}, []any{s.Gen, s.DispatchID, s.ResultPtr}, id)
		require.NotEmpty(t, s.ResultPtr, id)
	}
	for _, e := range res.History.Executions {
		require.NotZero(t, e.EndStep, e.JobID)
		require.False(t, e.Crashed, e.JobID)
	}
	t.Logf("steps=%d lines=%d redis=%+v end=%s", res.Steps, w.Trace().Lines(), res.History.Redis, res.History.End)
}

// Gateway clients start workflow runs with repeating idempotency keys under a
// limit of one concurrent run: every 200 for a key names one run, every client
// retries until it is admitted, and the workflow engine completes every run.
func TestWorldStartsWorkflowRuns(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 5, Workload: Workload{Jobs: 2, Runs: 12, RunKeys: 4}})
	res := w.Run()
	require.NoError(t, res.Err)
	statuses := map[int]int{}
	byKey := map[string]string{}
	for _, op := range res.History.Ops {
		if op.Kind != OpStartRun {
			continue
		}
		statuses[op.Status]++
		if op.Status == 200 {
			if prev, ok := byKey[op.Key]; ok {
				require.Equal(t, prev, op.Output, "key %s named two runs", op.Key)
			}
			byKey[op.Key] = op.Output
		}
	}
	require.Equal(t, 12, statuses[200], "each of the 12 clients ends admitted: %v", statuses)
	require.NotZero(t, statuses[429], "the limit of one run rejected some: %v", statuses)
	require.Len(t, res.Admission.Runs, len(byKey), "one run per key")
	for id, run := range res.Admission.Runs {
		require.Equal(t, "SUCCEEDED", run["status"], "run %s completed", id)
	}
	require.Empty(t, res.Admission.Reserved, "no reservation left without its run")
}

// The engine inside the simulator reads only virtual time: a run ends at a
// virtual time far beyond the wall time it took.
func TestEngineRunsOnVirtualTime(t *testing.T) {
	start := time.Now()
	w := NewWorld(Config{System: cordum.System{}, Seed: 9, Workload: Workload{Jobs: 5}})
	d := w.Drive()
	require.NoError(t, d.Advance(10*time.Minute))
	jobs := 0
	for _, key := range w.store.Keys() {
		if _, ok := w.obs.JobKey(key); ok {
			jobs++
			updated := w.store.Field(key, "updated_at")
			require.True(t, strings.HasPrefix(updated, "1767"), "timestamps come from the virtual epoch (2026-01-01): %s", updated)
		}
	}
	require.Equal(t, 5, jobs)
	res := d.Finish()
	require.NoError(t, res.Err)
	wall := time.Since(start)
	require.Greater(t, res.History.End, 100*wall, "virtual %s vs wall %s", res.History.End, wall)
}

// Jobs carry their tenants to the engine, which holds a capped tenant to its
// cap, and a job submitted without a topic is failed as invalid, never run.
func TestWorldCarriesTenantsAndRequestsWithoutATopic(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 3,
		Workload: Workload{Jobs: 24, SubmitWindow: 20 * time.Second, Tenants: 2, InvalidRate: 0.2},
		Workers:  WorkerProfile{JobDurationMin: 10 * time.Second, JobDurationMax: 20 * time.Second},
		Options:  sut.Options{TenantMaxActive: map[string]int{"tenant-1": 1}}})
	require.Equal(t, map[string]int{"tenant-1": 1}, w.Spec().TenantMaxActive)
	res := w.Run()
	require.NoError(t, res.Err)
	spec := w.Spec()
	tenant := map[string]string{}
	invalid := 0
	for _, j := range res.History.Submitted {
		tenant[j.JobID] = j.Tenant
		if j.Topic != "" {
			require.Equal(t, spec.Succeeded, res.Final[j.JobID].State, j.JobID)
			continue
		}
		invalid++
		require.Equal(t, spec.Failed, res.Final[j.JobID].State, j.JobID)
		require.Equal(t, spec.ReasonInvalidRequest, res.DLQ[j.JobID].ReasonCode, j.JobID)
	}
	require.Positive(t, invalid)
	for _, e := range res.History.Executions {
		require.NotEmpty(t, tenant[e.JobID], "job %s ran without its tenant", e.JobID)
	}
	// tenant-1 never had two jobs in flight at once; tenant-2 did.
	active, most := map[string]map[string]bool{}, map[string]int{}
	for _, s := range res.History.States {
		tn := tenant[s.JobID]
		if active[tn] == nil {
			active[tn] = map[string]bool{}
		}
		active[tn][s.JobID] = s.To == spec.Dispatched || s.To == spec.Running
		n := 0
		for _, on := range active[tn] {
			if on {
				n++
			}
		}
		most[tn] = max(most[tn], n)
	}
	require.Equal(t, 1, most["tenant-1"])
	require.Greater(t, most["tenant-2"], 1)
}

// A tenant keeps its largest cap across replicas, and none where a replica
// runs without one.
func TestLoosestCapsAcrossReplicaOptions(t *testing.T) {
	spec := loosestSpec(Config{System: cordum.System{}, Replicas: 3,
		Options: sut.Options{TenantMaxActive: map[string]int{"a": 1, "b": 2}},
		ReplicaOptions: map[int]sut.Options{
			2: {TenantMaxActive: map[string]int{"a": 3, "b": 1, "c": 4}},
			9: {TenantMaxActive: map[string]int{"d": 1}}, // no such replica
		}})
	require.Equal(t, map[string]int{"a": 3, "b": 2, "c": sut.NoTenantCap}, spec.TenantMaxActive)
	require.Nil(t, loosestSpec(Config{System: cordum.System{}, Replicas: 2}).TenantMaxActive)
}

// breakAt is a test's fault injector that never injects: its setup stages a
// simulator invariant breaking at a set time (on the controller, where a
// store failover's snapshot runs) or, with inActor, inside an actor.
type breakAt struct {
	at      time.Duration
	inActor bool
}

func (breakAt) At(*Point) (Fault, bool) { return Fault{}, false }

func (b breakAt) SetupWorld(w *World) {
	w.At(b.at, func() {
		if !b.inActor {
			kernel.Breachf("test: the store's snapshot lost a key")
		}
		w.k.Spawn("store", "check", func(ctx context.Context) { kernel.Breachf("test: the store's snapshot lost a key") })
	})
}

// A simulator invariant that breaks mid-run, on the controller or in an
// actor, ends the run with a HarnessFault at the step it broke: the process
// goes on, the world is shut down, and the history, trace and final store up
// to the fault are kept. The same seed breaks at the same step, and says so
// in the same words.
func TestAHarnessFaultMidRunKeepsTheEvidence(t *testing.T) {
	for _, inActor := range []bool{false, true} {
		var worlds []*World
		var results []*Result
		for range 2 { // one call site: the stacks match
			w := NewWorld(Config{System: cordum.System{}, Seed: 3, KeepTrace: true,
				Injector: breakAt{at: 40 * time.Second, inActor: inActor}})
			worlds, results = append(worlds, w), append(results, w.Run())
		}
		w, res, again := worlds[0], results[0], results[1]
		var f *kernel.HarnessFault
		require.ErrorAs(t, res.Err, &f, "inActor=%v", inActor)
		require.Equal(t, 40*time.Second, f.Time)
		require.Contains(t, f.Value, "the store's snapshot lost a key")
		require.Contains(t, f.Stack, "world_test.go")
		require.NotEmpty(t, f.Tail)
		require.Equal(t, res.Steps, f.Step)
		require.Equal(t, 40*time.Second, res.History.End, "the run stopped at the fault")
		require.NotEmpty(t, res.History.Executions, "what happened before the fault is kept")
		require.NotEmpty(t, res.Final, "the store is read at the end")
		require.True(t, bytes.HasSuffix(w.Trace().Bytes(), []byte(f.Tail+"\n")), "the trace ends where the fault's tail does")
		require.Equal(t, res.Checksum, again.Checksum)
		require.Equal(t, res.Err.Error(), again.Err.Error(), "the finding reads the same on every run")
	}
}

// A replica whose system refuses to start fails the run as the system's,
// though the harness's code raised it.
func TestAReplicaThatCannotStartIsTheSystems(t *testing.T) {
	res := NewWorld(Config{System: refusesReplicas{cordum.System{}}, Seed: 1}).Run()
	var sp *kernel.SystemPanic
	require.ErrorAs(t, res.Err, &sp)
	require.Contains(t, res.Err.Error(), "replica-1 could not start: no replicas today")
	var f *kernel.HarnessFault
	require.False(t, errors.As(res.Err, &f))
}

type refusesReplicas struct{ cordum.System }

func (refusesReplicas) StartReplica(sut.Ports, sut.Options) (sut.Replica, error) {
	return nil, errors.New("no replicas today")
}

// A driver's crash or pause of a replica is in the history, where the
// checkers look for why a section stopped: one left out would be judged as a
// live section that let its lock lapse.
func TestDriversCrashesAndPausesAreInTheHistory(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 1})
	d := w.Drive()
	require.NoError(t, d.Advance(5*time.Second))
	d.CrashReplica(1)
	d.CrashReplica(1) // already down: nothing more
	d.PauseReplica(0, 3*time.Second)
	require.NoError(t, d.Advance(time.Second))
	var got []string
	for _, f := range d.History().Faults {
		got = append(got, fmt.Sprintf("%s %s %s", f.Actor, f.Kind, f.Effect))
	}
	require.Equal(t, []string{"replica-2 Event:kill crash", "replica-1 Event:pause pause"}, got)
	d.Abort()
}
