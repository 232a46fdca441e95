package reports

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes a short Markdown account of a summary for a CI page
// (GitHub's step summary): the verdict, the seed counts, the failure groups
// with their replay lines, and the cases that did not pass.
func WriteMarkdown(w io.Writer, s *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### simrun %s: %s\n\n", s.Suite, verdictLabel(s.Verdict))
	fmt.Fprintf(&b, "%d of %d seeds ran", len(s.Seeds), s.Planned)
	if s.Shard != "" {
		fmt.Fprintf(&b, " (shard %s)", s.Shard)
	}
	if s.NotRun > 0 {
		fmt.Fprintf(&b, "; **%d not run**", s.NotRun)
	}
	if s.Stopped != "" {
		fmt.Fprintf(&b, " (%s)", s.Stopped)
	}
	fmt.Fprintf(&b, ". Build: %s.\n\n", s.Provenance)
	if len(s.Groups) > 0 {
		b.WriteString("| scenario | checker | verdict | seeds | replay the first |\n|---|---|---|---:|---|\n")
		for _, g := range s.Groups {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | `%s` |\n", mdCell(g.Scenario), mdCell(g.Checker), g.Verdict, g.Count,
				strings.ReplaceAll(g.Replay, "`", "'"))
		}
		b.WriteString("\n")
	}
	var bad []string
	for _, c := range s.Cases {
		if !c.Passed {
			bad = append(bad, fmt.Sprintf("- %s: %s", mdCell(CaseName(c.CaseSpec)), caseProblem(c)))
		}
	}
	if len(bad) > 0 {
		b.WriteString("Cases that did not pass:\n\n" + strings.Join(bad, "\n") + "\n\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func caseProblem(c CaseResult) string {
	var parts []string
	if n := len(c.Failed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d failing seeds (%s)", n, c.Verdict))
	}
	if len(c.NeverFired) > 0 {
		parts = append(parts, "never fired: "+strings.Join(c.NeverFired, ", "))
	}
	if n := len(c.NotRun); n > 0 {
		parts = append(parts, fmt.Sprintf("%d seeds not run", n))
	}
	return strings.Join(parts, "; ")
}

func mdCell(s string) string { return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s) }
