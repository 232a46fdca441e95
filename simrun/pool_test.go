package simrun

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
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
func (*fakeWorker) revive() bool { return false }
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

// diesOnSeed3 is a worker process that answers every task with a pass but
// dies on seed 3, as a seed that ends its process with a fatal error does.
func diesOnSeed3() *exec.Cmd {
	return exec.Command("sh", "-c", `while read -r line; do
  case "$line" in *'"seed":3}'*) exit 2;; esac
  echo '{"run":{"result":{"scenario":"swarm","seed":1,"verdict":"pass"}}}'
done`)
}

// A worker process that dies loses its one task: a new process takes the
// next, so one seed that ends its process does not end the run's other
// seeds; a worker that keeps dying stops after its restarts.
func TestAWorkerProcessThatDiesIsRestartedForTheNextTask(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	w, err := startWorkerCommand(diesOnSeed3)
	require.NoError(t, err)
	var tasks []task
	for i := range 8 {
		tasks = append(tasks, task{Scenario: "swarm", Seed: uint64(i)})
	}
	var mu sync.Mutex
	var died, ran []uint64
	runPool(context.Background(), nil, []worker{w}, tasks, func(o outcome) {
		mu.Lock()
		defer mu.Unlock()
		if o.err != nil {
			var wd *errWorkerDied
			require.ErrorAs(t, o.err, &wd)
			died = append(died, o.task.Seed)
			return
		}
		ran = append(ran, o.task.Seed)
	})
	require.Equal(t, []uint64{3}, died)
	require.Equal(t, []uint64{0, 1, 2, 4, 5, 6, 7}, ran, "the restarted process ran the rest")
	require.NoError(t, w.close())

	always, err := startWorkerCommand(func() *exec.Cmd { return exec.Command("sh", "-c", "exit 3") })
	require.NoError(t, err)
	lost := 0
	runPool(context.Background(), nil, []worker{always}, tasks, func(o outcome) {
		require.Error(t, o.err)
		lost++
	})
	require.Equal(t, 1+maxWorkerRestarts, lost, "one task per process, then it takes no more")
}
