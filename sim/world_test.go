package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
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
