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
	var systemList, suite, out string
	var jobs int
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Run the same seeds against several systems and write a side-by-side table (compare.html, compare.json)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var syss []sut.System
			for _, name := range strings.Split(systemList, ",") {
				sys, err := lookupSystem(strings.TrimSpace(name))
				if err != nil {
					return usageErrorf("--systems: %v", err)
				}
				syss = append(syss, sys)
			}
			sel, err := selectCases(suite, "", seedFlags{})
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
	fl.StringVar(&systemList, "systems", "cordum,outbox", "comma-separated systems to compare")
	fl.StringVar(&suite, "suite", "release", "suite whose seeds every system runs")
	fl.StringVar(&out, "out", "simrun-compare", "directory for compare.html and compare.json")
	fl.IntVarP(&jobs, "jobs", "j", runtime.NumCPU(),
		"seeds run in parallel, one worker process each; the systems still run one after the other")
	return cmd
}

// compare runs every seed of sel against each system in turn, the seeds of a
// system on jobs workers (as simrun run does), so each system's seeds/s is its
// own. Each seed comes back as its facts, summed in seed order: the table is
// the same for any jobs but for seeds/s.
func compare(stdout, stderr io.Writer, sel selection, syss []sut.System, out string, jobs int) error {
	var tasks []task
	for _, c := range sel.Cases {
		for _, seed := range c.Seeds {
			tasks = append(tasks, task{Index: len(tasks), Scenario: c.Scenario.Name, Seed: seed, Compare: true})
		}
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
		cols = append(cols, reports.SumSeeds(sys.Name(), facts, wall))
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
	return nil
}
