package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/sut"
)

func newCompareCmd() *cobra.Command {
	var systemList, suite, out string
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
			if err := os.MkdirAll(out, 0o755); err != nil {
				return usageErrorf("--out %s: %v", out, err)
			}
			return compare(cmd.OutOrStdout(), cmd.ErrOrStderr(), sel, syss, out)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&systemList, "systems", "cordum,outbox", "comma-separated systems to compare")
	fl.StringVar(&suite, "suite", "release", "suite whose seeds every system runs")
	fl.StringVar(&out, "out", "simrun-compare", "directory for compare.html and compare.json")
	return cmd
}

// compare runs every seed of sel against each system, one after the other in
// this process (the figures include seeds/s, so nothing else runs alongside).
func compare(stdout, stderr io.Writer, sel selection, syss []sut.System, out string) error {
	var cols []reports.SystemFacts
	seeds := 0
	for _, sys := range syss {
		var runs []reports.Run
		start := time.Now() // determinism-ok: seeds/s is a reported figure
		for _, c := range sel.Cases {
			sc := c.Scenario.On(sys)
			for _, seed := range c.Seeds {
				o := sc.Run(seed)
				runs = append(runs, reports.Run{System: sys.Name(), Scenario: sc.Name, Seed: seed, Result: o.Result,
					History: o.Run.History})
			}
		}
		wall := time.Since(start) // determinism-ok: figure
		fmt.Fprintf(stderr, "simrun: %s: %d seeds in %s\n", sys.Name(), len(runs), wall.Round(time.Millisecond))
		seeds = len(runs)
		cols = append(cols, reports.CompareSystem(sys.Name(), sys.Spec(sut.Options{}), runs, wall))
	}
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
