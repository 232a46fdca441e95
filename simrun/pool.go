package simrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// A worker runs tasks one at a time. With -j 1 the run is in this process;
// with -j N it is N child processes of this binary (simrun worker), each
// single-threaded: the kernel runs one actor at a time, so a seed cannot use a
// second core, and separate processes keep their heaps and GC apart.
type worker interface {
	do(t task) (seedRun, error)
	// stop ends the worker's task at once, if it can (an interrupt).
	stop()
	// revive readies a worker whose process died for its next task; false:
	// it takes no more.
	revive() bool
	// close ends the worker after its current task and waits for it.
	close() error
}

// outcome is one task's result as the pool reports it.
type outcome struct {
	task task
	run  seedRun
	err  error
}

// runPool feeds tasks to workers until they are done or ctx ends (a budget,
// --fail-fast, an interrupt): the tasks under way finish and go to done, one
// at a time, and a worker takes its next task only after done has seen its
// last, so done can stop the run before another seed starts. Once abandon is
// closed (an interrupt's grace period is over), runPool returns without
// waiting for the tasks under way; their outcomes are dropped.
func runPool(ctx context.Context, abandon <-chan struct{}, workers []worker, tasks []task, done func(outcome)) {
	next := make(chan task)
	var mu sync.Mutex // serialises done; abandoned is guarded by it
	abandoned := false
	finished := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				if ctx.Err() != nil {
					continue // handed out as the run stopped: not run
				}
				run, err := w.do(t)
				mu.Lock()
				if !abandoned {
					done(outcome{task: t, run: run, err: err})
				}
				mu.Unlock()
				var died *errWorkerDied
				if errors.As(err, &died) && (ctx.Err() != nil || !w.revive()) {
					return // the other workers take the rest; what none runs is reported missing
				}
			}
		}()
	}
	go func() {
		defer close(next)
		for _, t := range tasks {
			select {
			case next <- t:
			case <-ctx.Done():
				return
			case <-finished:
				return // every worker died
			}
		}
	}()
	go func() {
		wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-abandon:
		mu.Lock()
		abandoned = true
		mu.Unlock()
	}
}

// localWorker runs tasks in this process. It cannot be stopped mid-seed, so
// an interrupt waits for the artifacts it is writing (writing) and then
// keeps it from writing more.
type localWorker struct {
	out     string
	writing *sync.Mutex
}

func newLocalWorker(out string) localWorker { return localWorker{out: out, writing: &sync.Mutex{}} }

func (w localWorker) do(t task) (seedRun, error) {
	if t.Artifacts {
		w.writing.Lock()
		defer w.writing.Unlock()
	}
	return execute(t, w.out)
}
func (localWorker) stop()        {}
func (localWorker) revive() bool { return false }
func (localWorker) close() error { return nil }

// seal waits for artifacts being written and forbids any later ones; the
// process is about to exit.
func (w localWorker) seal() { w.writing.Lock() }

// errWorkerDied is a worker process gone: its task is lost. The worker
// starts a new process for the next task (revive), a few times at most.
type errWorkerDied struct{ msg string }

func (e *errWorkerDied) Error() string { return e.msg }

// maxWorkerRestarts bounds the processes a worker starts in place of dead
// ones: a seed that kills its process (a fatal runtime error no recover
// catches) loses itself, not the rest of the run, but a binary that cannot
// run a seed at all must not be restarted for ever.
const maxWorkerRestarts = 3

// processWorker is a child process speaking JSON lines: a task in, a reply
// out. When the process dies it is restarted for the next task.
type processWorker struct {
	command func() *exec.Cmd // a new child process, not started
	// mu guards the process against stop, which the interrupt watcher calls.
	mu       sync.Mutex
	cmd      *exec.Cmd // nil: the process died and was reaped
	in       io.WriteCloser
	out      *bufio.Scanner
	stopped  bool
	restarts int
}

// workerReply is a child's answer to one task.
type workerReply struct {
	Run   seedRun `json:"run"`
	Error string  `json:"error,omitempty"`
	// Nondeterministic carries exit 5 across the process boundary.
	Nondeterministic bool `json:"nondeterministic,omitempty"`
}

func startProcessWorker(out string) (*processWorker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	args := []string{"worker", "--out", out}
	if commitFlag != "" {
		args = append(args, "--commit", commitFlag)
	}
	return startWorkerCommand(func() *exec.Cmd {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		if os.Getenv("GOGC") == "" {
			// A seed's garbage is short-lived and its live heap small: collecting
			// less often saves about a sixth of a worker's CPU.
			cmd.Env = append(cmd.Env, "GOGC=400")
		}
		cmd.SysProcAttr = workerProcAttr()
		cmd.Stderr = os.Stderr
		return cmd
	})
}

// startWorkerCommand starts a worker whose processes command makes.
func startWorkerCommand(command func() *exec.Cmd) (*processWorker, error) {
	w := &processWorker{command: command}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w, w.spawn()
}

// spawn starts a process; w.mu is held.
func (w *processWorker) spawn() error {
	cmd := w.command()
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker process: %w", err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	w.cmd, w.in, w.out = cmd, in, sc
	return nil
}

func (w *processWorker) do(t task) (seedRun, error) {
	w.mu.Lock()
	in, out := w.in, w.out
	alive := w.cmd != nil
	w.mu.Unlock()
	if !alive {
		return seedRun{}, &errWorkerDied{fmt.Sprintf("worker process gone before %s seed %d", t.Scenario, t.Seed)}
	}
	b, _ := json.Marshal(t)
	if _, err := in.Write(append(b, '\n')); err != nil {
		return seedRun{}, w.died(t, fmt.Errorf("send: %w", err))
	}
	if !out.Scan() {
		err := out.Err()
		if err == nil {
			err = errors.New("exited")
		}
		return seedRun{}, w.died(t, err)
	}
	var r workerReply
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return seedRun{}, fmt.Errorf("worker process: bad reply: %w", err)
	}
	switch {
	case r.Nondeterministic:
		return r.Run, &errNondeterministic{msg: r.Error}
	case r.Error != "":
		return r.Run, errors.New(r.Error)
	}
	return r.Run, nil
}

// died reaps the process that died running t.
func (w *processWorker) died(t task, cause error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd != nil {
		_ = w.in.Close()
		_ = w.cmd.Process.Kill() // a process that closed its output but lives on
		_ = w.cmd.Wait()
		w.cmd = nil
	}
	return &errWorkerDied{fmt.Sprintf("worker process died on %s seed %d: %v", t.Scenario, t.Seed, cause)}
}

// revive starts a new process in place of a dead one, unless the run is
// being stopped or the worker has restarted too often; false: it takes no
// more tasks.
func (w *processWorker) revive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.restarts >= maxWorkerRestarts {
		return false
	}
	w.restarts++
	return w.spawn() == nil
}

// stop kills the process: what it was writing is removed by the caller, and
// nothing is written after close has waited for it. No process starts after.
func (w *processWorker) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.cmd != nil {
		_ = w.cmd.Process.Kill()
	}
}

func (w *processWorker) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil {
		return nil
	}
	_ = w.in.Close()
	return w.cmd.Wait()
}

// serveWorker is the child's side: tasks on in, replies on out, until EOF.
// Interrupts are the parent's to handle: a terminal's Ctrl-C reaches the
// whole process group, and a child that died mid-write would leave a torn
// seed folder behind the parent's back.
func serveWorker(in io.Reader, out io.Writer, dir string) error {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var t task
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return fmt.Errorf("worker: bad task %q: %w", strings.TrimSpace(sc.Text()), err)
		}
		run, err := execute(t, dir)
		reply := workerReply{Run: run}
		if err != nil {
			reply.Error = err.Error()
			var nd *errNondeterministic
			reply.Nondeterministic = errors.As(err, &nd)
		}
		if err := enc.Encode(reply); err != nil {
			return err
		}
	}
	return sc.Err()
}
