package simrun

import (
	"errors"
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
		Use: "merge DIR...",
		Short: "Merge the shards of one run (every I/N, one suite, seed list and commit) into one summary, " +
			"index.html and (optionally) JUnit; exit 6 when a shard is missing",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			return mergeCmd(cmd, dirs, out, junit)
		},
	}
	merge.Flags().StringVar(&out, "out", "simrun-merged", "directory for the merged summary.json, index.html and failing seeds' folders")
	merge.Flags().StringVar(&junit, "junit", "", "also write merged JUnit XML to this file")
	cmd.AddCommand(merge)
	cmd.AddCommand(newReportDiffCmd())
	return cmd
}

func mergeCmd(cmd *cobra.Command, dirs []string, out, junit string) error {
	if err := ensureWritableDir(out); err != nil {
		return usageErrorf("--out %s: %v", out, err)
	}
	if junit != "" {
		if err := ensureWritableFile(junit); err != nil {
			return usageErrorf("--junit %s: %v", junit, err)
		}
	}
	parts, err := readShards(dirs, out)
	if err != nil {
		return usageErrorf("%v", err)
	}
	sum, err := reports.Merge(parts)
	var missing *reports.MissingShardsError
	if err != nil && !errors.As(err, &missing) {
		return usageErrorf("%v", err)
	}
	n, movedTo, err := cleanOutDir(out, false)
	if err != nil {
		return usageErrorf("--out %s: clear the previous merge: %v", out, err)
	}
	reportCleared(cmd.ErrOrStderr(), out, n, movedTo)
	if err := gatherArtifacts(sum, dirs, parts, out); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if err := writeOutputs(out, sum, junit); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := writeGitHubOutputs(stdout, sum); err != nil {
		fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
	}
	fmt.Fprintf(stdout, "%s: %s, %d of %d seeds from %d shards; %s\n", sum.Suite, sum.Verdict,
		len(sum.Seeds), sum.Planned, len(parts), filepath.Join(out, "index.html"))
	if missing != nil {
		fmt.Fprintln(stderr, "simrun: "+missing.Error())
	}
	return exitWith(sum.ExitCode())
}

// readShards reads each dir's summary.json.
func readShards(dirs []string, out string) ([]*reports.Summary, error) {
	var parts []*reports.Summary
	for _, dir := range dirs {
		if same, _ := sameDir(dir, out); same {
			return nil, fmt.Errorf("%s: a shard cannot be merged into itself (--out)", dir)
		}
		path := filepath.Join(dir, "summary.json")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: no summary.json (is it a simrun --out directory?)", dir)
		}
		s, err := reports.ReadSummary(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		parts = append(parts, s)
	}
	return parts, nil
}

func sameDir(a, b string) (bool, error) {
	x, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	y, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(x, y), nil
}

// gatherArtifacts copies each failing seed's folder from its shard into out,
// so the merged artifact opens every link on its own, and points the seed's
// artifacts and replay line there.
func gatherArtifacts(sum *reports.Summary, dirs []string, parts []*reports.Summary, out string) error {
	from := map[string]string{} // "scenario/seed/finding" -> the shard folder holding it
	for i, p := range parts {
		for _, r := range p.Seeds {
			if r.Artifacts != "" {
				from[r.Scenario+"/"+fmt.Sprint(r.Seed)+"/"+r.Finding] = filepath.Join(dirs[i], r.Artifacts)
			}
		}
	}
	for i, r := range sum.Seeds {
		src, ok := from[r.Scenario+"/"+fmt.Sprint(r.Seed)+"/"+r.Finding]
		if !ok {
			if !passed(r) {
				sum.Seeds[i].Replay = replayFromSummary(out, r.System, r.Scenario, r.Seed, variantOf(r))
			}
			continue
		}
		dir := artifactDir(r.Scenario, r.Seed, variantOf(r))
		if err := copyDir(src, filepath.Join(out, dir)); err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
		sum.Seeds[i].Artifacts = dir
		sum.Seeds[i].Replay = replayFrom(filepath.Join(out, dir))
	}
	for gi, g := range sum.Groups {
		for _, r := range sum.Seeds {
			if r.Scenario == g.Scenario && r.Seed == g.FirstSeed && r.Finding == g.Finding {
				sum.Groups[gi].Replay = r.Replay
			}
		}
	}
	return nil
}
