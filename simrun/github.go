package simrun

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dispatchsim/dispatchsim/reports"
)

// maxAnnotations is what a GitHub Actions step shows of its error
// annotations; more would be dropped there anyway.
const maxAnnotations = 10

// writeGitHubOutputs speaks GitHub Actions' language when it runs there: a
// Markdown summary appended to $GITHUB_STEP_SUMMARY, and an ::error
// annotation per failure group on stdout when GITHUB_ACTIONS=true.
func writeGitHubOutputs(stdout io.Writer, sum *reports.Summary) error {
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		for i, g := range sum.Groups {
			if i == maxAnnotations {
				break
			}
			title := fmt.Sprintf("%s: %s (%d seeds)", g.Scenario, g.Checker, g.Count)
			fmt.Fprintf(stdout, "::error title=%s::%s\n", escapeProperty(title),
				escapeData(fmt.Sprintf("%s seed %d failed (%s). Replay: %s", g.Scenario, g.FirstSeed, g.Verdict, g.Replay)))
		}
		if sum.NotRun > 0 || sum.InterruptedBy != "" {
			fmt.Fprintf(stdout, "::error title=%s::%s\n", escapeProperty("simrun: "+sum.Verdict),
				escapeData(fmt.Sprintf("%d of %d seeds did not run (%s)", sum.NotRun, sum.Planned, sum.Stopped)))
		}
	}
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	if err := reports.WriteMarkdown(f, sum); err != nil {
		_ = f.Close()
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	return f.Close()
}

// escapeData and escapeProperty follow the workflow-command encoding of
// GitHub's actions/toolkit (command.ts).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
