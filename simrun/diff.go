package simrun

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/reports"
)

// newReportDiffCmd is `simrun report diff BASE_DIR NEW_DIR`: what changed
// between two runs of a suite, say main's and a pull request's.
func newReportDiffCmd() *cobra.Command {
	var out string
	var failOnAny bool
	cmd := &cobra.Command{
		Use:   "diff BASE_DIR NEW_DIR",
		Short: "Classify every seed of two runs of a suite: newly failing, still failing, fixed, new, removed; exit 1 only for newly failing seeds",
		Long: "Reads the summary.json of a baseline run and of a new run of the same suite (each a simrun --out\n" +
			"directory, or a summary.json), prints a short table, and writes diff.html and diff.json to --out\n" +
			"(default: NEW_DIR). With GITHUB_STEP_SUMMARY set, the table is appended to that file as Markdown.\n" +
			"Exit 0 when no seed newly fails, 1 when one does (or, with --fail-on-any, when any seed fails),\n" +
			"2 on bad input.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			baseDir, newDir := args[0], args[1]
			base, err := readRunSummary(baseDir)
			if err != nil {
				return usageErrorf("baseline %v", err)
			}
			next, err := readRunSummary(newDir)
			if err != nil {
				return usageErrorf("new run %v", err)
			}
			if out == "" {
				out = summaryDir(newDir)
			}
			if err := ensureWritableDir(out); err != nil {
				return usageErrorf("--out %s: %v", out, err)
			}
			relinkArtifacts(next, summaryDir(newDir), out)
			d, err := reports.CompareSummaries(base, next, baseDir, newDir)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if err := writeDiff(out, d); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if err := d.WriteText(cmd.OutOrStdout()); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", filepath.Join(out, "diff.html"))
			if path := os.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
				if err := appendStepSummary(path, d); err != nil {
					return &exitError{code: exitUsage, err: fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)}
				}
			}
			return exitWith(d.ExitCode(failOnAny))
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory for diff.html and diff.json (default: NEW_DIR)")
	cmd.Flags().BoolVar(&failOnAny, "fail-on-any", false, "exit 1 when any seed fails in the new run, not only a newly failing one")
	return cmd
}

// readRunSummary reads arg's summary: arg is a simrun --out directory or a
// summary.json.
func readRunSummary(arg string) (*reports.Summary, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("%s: no such directory or file", arg)
	}
	path := arg
	if st.IsDir() {
		path = filepath.Join(arg, "summary.json")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: no summary.json (is it a simrun --out directory?)", arg)
		}
	}
	s, err := reports.ReadSummary(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", arg, err)
	}
	return s, nil
}

// summaryDir is the directory a summary's artifact paths are relative to.
func summaryDir(arg string) string {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return filepath.Dir(arg)
	}
	return arg
}

// relinkArtifacts makes the summary's artifact paths relative to out, so
// that diff.html links to the new run's seed reports.
func relinkArtifacts(s *reports.Summary, dir, out string) {
	for i, r := range s.Seeds {
		if r.Artifacts == "" || filepath.IsAbs(r.Artifacts) {
			continue
		}
		if rel, err := filepath.Rel(out, filepath.Join(dir, r.Artifacts)); err == nil {
			s.Seeds[i].Artifacts = filepath.ToSlash(rel)
		}
	}
}

func writeDiff(out string, d *reports.Diff) error {
	if err := reports.WriteJSONAtomic(filepath.Join(out, "diff.json"), d); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	if err := reports.WriteFileAtomic(filepath.Join(out, "diff.html"), d.WriteHTML); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	return nil
}

// appendStepSummary appends the diff's Markdown to a GitHub job summary.
func appendStepSummary(path string, d *reports.Diff) (err error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return d.WriteMarkdown(f)
}
