package simrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/sut"
)

func newCompareCmd() *cobra.Command {
	var systemList, suite, scenario, out string
	var seeds seedFlags
	var jobs int
	cmd := &cobra.Command{
		Use: "compare",
		Short: "Run the same seeds against several systems and write a side-by-side table (compare.html, compare.json); " +
			"exit with the worst system's verdict code: 0 pass, 1 safety, 3 liveness, 4 inconclusive",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var syss []sut.System
			for _, name := range strings.Split(systemList, ",") {
				sys, err := lookupSystem(strings.TrimSpace(name))
				if err != nil {
					return usageErrorf("--systems: %v", err)
				}
				syss = append(syss, sys)
			}
			if cmd.Flags().Changed("count") && seeds.count == 0 {
				return usageErrorf("--count 0: want at least 1")
			}
			sel, err := selectCases(suite, scenario, seeds)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if jobs < 1 {
				return usageErrorf("-j %d: want at least 1", jobs)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return usageErrorf("--out %s: %v", out, err)
			}
			return compare(cmd.OutOrStdout(), cmd.ErrOrStderr(), sel, syss, out, jobs)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&systemList, "systems", strings.Join(systems.order, ","), "comma-separated systems to compare; by default every registered one")
	fl.StringVar(&suite, "suite", "", "suite whose seeds every system runs (default release)")
	fl.StringVar(&scenario, "scenario", "", "compare on one scenario's seeds instead of a suite")
	fl.StringVar(&seeds.seed, "seed", "", "run this seed (decimal, 0x-hex or a 40-hex commit id)")
	fl.StringVar(&seeds.seeds, "seeds", "", "run seeds A..B, both included")
	fl.IntVar(&seeds.count, "count", 0, "run N seeds: from --seed, or from the start of each range")
	fl.StringVar(&out, "out", "simrun-compare", "directory for compare.html and compare.json")
	fl.IntVarP(&jobs, "jobs", "j", runtime.NumCPU(),
		"seeds run in parallel, one worker process each; the systems still run one after the other")
	return cmd
}

// taskKey names a task's seed within its case.
func taskKey(t task) string { return fmt.Sprintf("%s/%s/%d", t.Scenario, t.Finding, t.Seed) }

// compare runs every seed of sel against each system in turn, the seeds of a
// system on jobs workers (as simrun run does), so each system's seeds/s is its
// own. Each seed comes back as its facts and its result, summed in seed
// order: the table is the same for any jobs but for seeds/s. Each system is
// judged as simrun run judges it, and the command exits with the worst
// system's verdict code.
func compare(stdout, stderr io.Writer, sel selection, syss []sut.System, out string, jobs int) error {
	tasks := sel.tasks(shard{I: 1, N: 1})
	for i := range tasks {
		tasks[i].Index, tasks[i].Compare = i, true
	}
	workers, err := startWorkers(min(jobs, len(tasks)), out)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	intr := watchInterrupts(stderr, workers)
	defer intr.release()
	defer intr.settle(workers)
	var cols []reports.SystemFacts
	for _, sys := range syss {
		for i := range tasks {
			tasks[i].System = sys.Name()
		}
		facts := make([]reports.SeedFacts, len(tasks))
		results := make([]reports.SeedResult, len(tasks))
		ran := 0
		var errs []error
		start := time.Now() // determinism-ok: seeds/s is a reported figure
		runPool(intr.ctx, intr.abandon, workers, tasks, func(o outcome) {
			if o.err == nil && o.run.Compare == nil {
				o.err = errors.New("the worker sent no facts")
			}
			if o.err != nil {
				errs = append(errs, fmt.Errorf("%s %s seed %d: %w", sys.Name(), o.task.Scenario, o.task.Seed, o.err))
				return
			}
			facts[o.task.Index] = *o.run.Compare
			results[o.task.Index] = o.run.Result
			ran++
		})
		wall := time.Since(start) // determinism-ok: figure
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if ran < len(tasks) {
			return fmt.Errorf("%s: %d of %d seeds ran (interrupted): no table written", sys.Name(), ran, len(tasks))
		}
		fmt.Fprintf(stderr, "simrun: %s: %d seeds in %s\n", sys.Name(), ran, wall.Round(time.Millisecond))
		col := reports.SumSeeds(sys.Name(), facts, wall)
		// Judged as simrun run judges it: over the cases fitted to the
		// system, the not-applicable ones listed and left out.
		fsel, fit := fitSelection(sel, sys)
		applies := map[string]bool{}
		for _, t := range fsel.tasks(shard{I: 1, N: 1}) {
			applies[taskKey(t)] = true
		}
		var judged []reports.SeedResult
		for i, t := range tasks {
			if applies[taskKey(t)] {
				judged = append(judged, results[i])
			}
		}
		sum := reports.Build("simrun "+version, sel.Name, "", fsel.specs(sys), judged, wall.Seconds())
		sum.System = sys.Name()
		for _, c := range fit.notApplicable {
			sum.NotApplicable = append(sum.NotApplicable, reports.NotApplicableCase{Case: caseLabel(c), Reason: c.NotApplicable})
		}
		col.Judge(sum)
		cols = append(cols, col)
	}
	seeds := len(tasks)
	c := reports.NewComparison(sel.Name, seeds, cols)
	fmt.Fprint(stdout, c.Text())
	for name, write := range map[string]func(io.Writer) error{"compare.html": c.WriteHTML, "compare.json": c.WriteJSON} {
		if err := reports.WriteFileAtomic(filepath.Join(out, name), write); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", filepath.Join(out, "compare.html"), filepath.Join(out, "compare.json"))
	return exitWith(c.ExitCode())
}
