package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/reports"
)

// runFlags are the flags of simrun run.
type runFlags struct {
	suite, scenario string
	seeds           seedFlags
	jobs            int
	shard           string
	out             string
	json            bool
	junit           string
	budget          time.Duration
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a suite or a scenario over seeds; exit 0 pass, 1 safety, 3 liveness, 4 inconclusive, 5 non-deterministic",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runSuite(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "", "suite to run (release, exploratory, regression; default release)")
	fl.StringVar(&f.scenario, "scenario", "", "run one scenario instead of a suite")
	fl.StringVar(&f.seeds.seed, "seed", "", "run this seed (decimal, 0x-hex or a 40-hex commit id)")
	fl.StringVar(&f.seeds.seeds, "seeds", "", "run seeds A..B, both included")
	fl.IntVar(&f.seeds.count, "count", 0, "run N seeds: from --seed, or from the start of each range")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.NumCPU(), "seeds run in parallel, one worker process each")
	fl.StringVar(&f.shard, "shard", "", "run only shard I of N (I/N, 1-based) of the seeds")
	fl.StringVar(&f.out, "out", "simrun-out", "directory for summary.json, index.html and failing seeds' artifacts")
	fl.BoolVar(&f.json, "json", false, "print summary.json to stdout instead of the text summary")
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML to this file")
	fl.DurationVar(&f.budget, "budget", 0, "stop starting seeds after this long (0: no limit); unrun seeds are reported missing")
	return cmd
}

func runSuite(cmd *cobra.Command, f runFlags) error {
	sel, err := selectCases(f.suite, f.scenario, f.seeds)
	if err != nil {
		return usageErrorf("%v", err)
	}
	sh, err := parseShard(f.shard)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if f.jobs < 1 {
		return usageErrorf("-j %d: want at least 1", f.jobs)
	}
	if f.budget < 0 {
		return usageErrorf("--budget %s: want a positive duration", f.budget)
	}
	if err := ensureWritableDir(f.out); err != nil {
		return usageErrorf("--out %s: %v", f.out, err)
	}
	tasks := sel.tasks(sh)
	if len(tasks) == 0 {
		return usageErrorf("shard %s of %s has no seeds", sh, sel.Name)
	}

	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	workers, err := startWorkers(min(f.jobs, len(tasks)), f.out)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	ctx := context.Background()
	if f.budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.budget) // determinism-ok: a wall-clock budget on the CLI, outside the simulation
		defer cancel()
	}

	start := time.Now() // determinism-ok: wall time is a reported figure
	what := sel.Name
	if sh.N > 1 {
		what += " shard " + sh.String()
	}
	prog := newProgress(stderr, len(tasks), what)
	var results []reports.SeedResult
	var failures []string
	var runErrs []error
	nondet := false
	runPool(ctx, workers, tasks, func(o outcome) {
		if o.err != nil {
			var nd *errNondeterministic
			nondet = nondet || errors.As(o.err, &nd)
			runErrs = append(runErrs, o.err)
			prog.fail(o.err.Error())
		}
		if o.run.Result.Scenario == "" {
			prog.done(false)
			return
		}
		results = append(results, o.run.Result)
		ok := passed(o.run.Result)
		if !ok {
			failures = append(failures, o.run.Failure)
			prog.fail(o.run.Failure)
		}
		prog.done(ok)
	})
	prog.finish()
	for _, w := range workers {
		_ = w.close()
	}
	wall := time.Since(start) // determinism-ok: figure

	sum := reports.Build("simrun "+version, sel.Name, sh.String(), sel.specs(), results, wall.Seconds())
	if err := writeOutputs(f.out, sum, f.junit); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if f.json {
		if err := writeJSON(stdout, sum); err != nil {
			return err
		}
	} else {
		printSummary(stdout, sum, failures, len(tasks), f.out, wall)
	}
	for _, err := range runErrs {
		fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
	}
	switch {
	case nondet:
		return exitWith(exitNondeterministic)
	case len(runErrs) > 0 && sum.ExitCode() == exitPass:
		return exitWith(exitSafety) // a seed that could not be judged is not a pass
	}
	return exitWith(sum.ExitCode())
}

func startWorkers(n int, out string) ([]worker, error) {
	if n == 1 {
		return []worker{localWorker{out: out}}, nil
	}
	var ws []worker
	for range n {
		w, err := startProcessWorker(out)
		if err != nil {
			for _, started := range ws {
				_ = started.close()
			}
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// ensureWritableDir creates dir and proves it takes a file.
func ensureWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// writeOutputs writes summary.json, index.html and, if asked, JUnit XML.
func writeOutputs(out string, sum *reports.Summary, junit string) error {
	if err := reports.WriteJSONAtomic(filepath.Join(out, "summary.json"), sum); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := reports.WriteFileAtomic(filepath.Join(out, "index.html"), func(w io.Writer) error {
		return reports.WriteIndex(w, sum)
	}); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if junit != "" {
		if err := reports.WriteFileAtomic(junit, func(w io.Writer) error { return reports.WriteJUnit(w, sum) }); err != nil {
			return fmt.Errorf("write junit: %w", err)
		}
	}
	return nil
}

// printSummary ends a run: each failure told in full (options first, replay
// line last), then one line per case and the totals.
func printSummary(w io.Writer, sum *reports.Summary, failures []string, planned int, out string, wall time.Duration) {
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	for _, c := range sum.Cases {
		status := "ok  "
		if !c.Passed {
			status = "FAIL"
		}
		ran := len(c.Seeds) - len(c.Missing)
		line := fmt.Sprintf("%s %-44s %3d seeds", status, reports.CaseName(c.CaseSpec), ran)
		if len(c.Failed) > 0 {
			line += fmt.Sprintf("  failed: %v", c.Failed)
		}
		for _, k := range c.NeverFired {
			line += "  never fired: " + k
		}
		fmt.Fprintln(w, line)
	}
	rate := float64(len(sum.Seeds)) / max(wall.Seconds(), 1e-9)
	fmt.Fprintf(w, "%s: %s, %d of %d seeds in %s (%.1f seeds/s); summary %s\n", sum.Suite, sum.Verdict,
		len(sum.Seeds), planned, wall.Round(time.Millisecond), rate, filepath.Join(out, "summary.json"))
}

func newWorkerCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "Run tasks from stdin as JSON lines (used by run -j N)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveWorker(cmd.InOrStdin(), cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "simrun-out", "artifact directory")
	return cmd
}
