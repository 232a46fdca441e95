package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/reports"
)

func newReportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Work with run outputs",
	}
	var out, junit string
	merge := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Merge the summary.json of shards into one summary, index.html and (optionally) JUnit",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if err := ensureWritableDir(out); err != nil {
				return usageErrorf("--out %s: %v", out, err)
			}
			sum, err := mergeShards(dirs, out)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if err := writeOutputs(out, sum, junit); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %d seeds from %d shards; %s\n", sum.Suite, sum.Verdict,
				len(sum.Seeds), len(dirs), filepath.Join(out, "index.html"))
			return exitWith(sum.ExitCode())
		},
	}
	merge.Flags().StringVar(&out, "out", "simrun-merged", "directory for the merged summary.json and index.html")
	merge.Flags().StringVar(&junit, "junit", "", "also write merged JUnit XML to this file")
	cmd.AddCommand(merge)
	cmd.AddCommand(newReportDiffCmd())
	return cmd
}

// mergeShards reads each dir's summary.json and merges them; artifact paths
// are rewritten relative to out, so the merged index links into the shards.
func mergeShards(dirs []string, out string) (*reports.Summary, error) {
	var parts []*reports.Summary
	for _, dir := range dirs {
		path := filepath.Join(dir, "summary.json")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: no summary.json (is it a simrun --out directory?)", dir)
		}
		s, err := reports.ReadSummary(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		for i, r := range s.Seeds {
			if r.Artifacts == "" {
				continue
			}
			abs := r.Artifacts
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(dir, abs)
			}
			if rel, err := filepath.Rel(out, abs); err == nil {
				s.Seeds[i].Artifacts = rel
			}
		}
		parts = append(parts, s)
	}
	return reports.Merge(parts)
}
