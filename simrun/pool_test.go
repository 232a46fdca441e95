package simrun

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/reports"
)

// fakeWorker answers tasks itself; dies makes its first task a lost process.
type fakeWorker struct{ dies bool }

func (w *fakeWorker) do(t task) (seedRun, error) {
	if w.dies {
		return seedRun{}, &errWorkerDied{msg: "worker process died"}
	}
	return seedRun{Result: reports.SeedResult{Scenario: t.Scenario, Seed: t.Seed, Verdict: "pass"}}, nil
}

func (*fakeWorker) stop()        {}
func (*fakeWorker) close() error { return nil }

// A dead worker process loses its one task and takes no more: the others run
// the rest.
func TestPoolRoutesAroundADeadWorker(t *testing.T) {
	var tasks []task
	for i := range 20 {
		tasks = append(tasks, task{Scenario: "swarm", Seed: uint64(i)})
	}
	var done, lost int
	runPool(context.Background(), nil, []worker{&fakeWorker{dies: true}, &fakeWorker{}}, tasks, func(o outcome) {
		if o.err != nil {
			lost++
			return
		}
		done++
	})
	require.LessOrEqual(t, lost, 1, "a dead worker takes no second task")
	require.Equal(t, 20, done+lost, "every other task ran")
}

// A spent budget stops new tasks; the ones started finish.
func TestPoolStopsAtTheBudget(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	runPool(ctx, nil, []worker{&fakeWorker{}}, []task{{Seed: 1}, {Seed: 2}, {Seed: 3}}, func(outcome) { n++ })
	require.LessOrEqual(t, n, 1, "at most a task already handed out runs after the budget")
}
