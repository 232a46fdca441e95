package simrun

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/reports"
)

// fakeWorker answers tasks itself; dies makes its first task a lost process;
// fails maps a seed to the checker its run fails with.
type fakeWorker struct {
	dies  bool
	fails map[uint64]string
}

func (w *fakeWorker) do(t task) (seedRun, error) {
	if w.dies {
		return seedRun{}, &errWorkerDied{msg: "worker process died"}
	}
	r := reports.SeedResult{Scenario: t.Scenario, Seed: t.Seed, Verdict: "pass"}
	if c, ok := w.fails[t.Seed]; ok {
		r.Verdict, r.Violations = "fail-safety", []reports.Violation{{Checker: c, Layer: layerOf(c)}}
	}
	return seedRun{Result: r}, nil
}

// layerOf puts the fake's "store_*" checkers in the environment layer.
func layerOf(c string) string {
	if strings.HasPrefix(c, "store_") {
		return string(checker.LayerEnvironment)
	}
	return "safety"
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

// --until stops a run at the first failure of a named checker: another
// checker's failure, or the store's broken contract, does not stop it.
func TestRunStopsWhenAnUntilCheckerFires(t *testing.T) {
	w := &fakeWorker{fails: map[uint64]string{3: "attempts", 5: "store_contract", 7: "no_resurrection"}}
	var tasks []task
	for i := range 20 {
		tasks = append(tasks, task{Scenario: "swarm", Seed: uint64(i)})
	}
	intr := watchInterrupts(io.Discard, []worker{w})
	defer intr.release()
	rs := runSeeds(intr, []worker{w}, tasks, runFlags{until: []string{"no_resurrection", "store_contract"}},
		newProgress(io.Discard, len(tasks), "test"))
	require.Equal(t, untilStop("no_resurrection"), rs.stopped)
	require.GreaterOrEqual(t, rs.notRun(), 11, "seeds 0..7 ran, and at most one handed out before the stop")

	rs = runSeeds(intr, []worker{w}, tasks, runFlags{until: []string{anyChecker}}, newProgress(io.Discard, len(tasks), "test"))
	require.Equal(t, untilStop("attempts"), rs.stopped, "any checker stops it, but the environment's")
}
