package simrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/reports"
)

// writeRun writes a run's summary.json into a new directory: seeds of
// scenario swarm with the given verdicts (seed n at index n-1).
func writeRun(t *testing.T, suite string, verdicts ...string) string {
	t.Helper()
	dir := t.TempDir()
	var seeds []reports.SeedResult
	var ids []uint64
	for i, v := range verdicts {
		n := uint64(9000 + i)
		r := reports.SeedResult{Scenario: "swarm", Seed: n, Checksum: "0123456789abcdef", Verdict: v, Linearizability: "ok",
			Replay: fmt.Sprintf("simrun replay --scenario swarm --seed %d", n)}
		if v != reports.VerdictPass {
			r.Violations = []reports.Violation{{Layer: "invariants", Checker: "no_resurrection", Job: "j-1", Step: 5}}
			r.Artifacts = fmt.Sprintf("swarm/%d", n)
		}
		seeds = append(seeds, r)
		ids = append(ids, n)
	}
	sum := reports.Build("simrun test", suite, "", []reports.CaseSpec{{Scenario: "swarm", Seeds: ids}}, seeds, 1)
	require.NoError(t, reports.WriteJSONAtomic(filepath.Join(dir, "summary.json"), sum))
	return dir
}

// simrunEnv runs simrun with extra environment variables.
func simrunEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return simrunWith(t, simrunBin, env, args...)
}

func TestReportDiffFailsOnlyOnNewlyFailingSeeds(t *testing.T) {
	base := writeRun(t, "release", "pass", "safety", "pass")
	next := writeRun(t, "release", "safety", "safety", "pass") // 9000 newly fails, 9001 still fails
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	require.NoError(t, os.WriteFile(summary, []byte("earlier step\n"), 0o644))

	r := simrunEnv(t, []string{"GITHUB_STEP_SUMMARY=" + summary}, "report", "diff", base, next)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "newly failing                       1")
	require.Contains(t, r.stdout, "still failing, same checker         1")
	require.Contains(t, r.stdout, "swarm seed 9000: safety (no_resurrection)")
	require.Contains(t, r.stdout, filepath.Join(next, "diff.html"))

	var d reports.Diff
	b, err := os.ReadFile(filepath.Join(next, "diff.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &d))
	require.Equal(t, 1, d.Counts[reports.DiffNewlyFailing])
	require.Equal(t, "swarm/9000/report.html", d.Seeds[0].Report, "relative to NEW_DIR, where diff.html is")
	page, err := os.ReadFile(filepath.Join(next, "diff.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), `href="swarm/9000/report.html"`)

	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(md), "earlier step\n"), "appended, not overwritten")
	require.Contains(t, string(md), "| newly failing | 1 |")
}

func TestReportDiffStillFailingPassesUnlessFailOnAny(t *testing.T) {
	base := writeRun(t, "release", "safety", "pass")
	next := writeRun(t, "release", "safety", "pass")
	out := filepath.Join(t.TempDir(), "diff-out")

	r := simrunEnv(t, nil, "report", "diff", "--out", out, base, filepath.Join(next, "summary.json"))
	require.Equal(t, exitPass, r.code, r.stdout+r.stderr)
	require.FileExists(t, filepath.Join(out, "diff.html"))
	b, err := os.ReadFile(filepath.Join(out, "diff.json"))
	require.NoError(t, err)
	var d reports.Diff
	require.NoError(t, json.Unmarshal(b, &d))
	rel, err := filepath.Rel(out, filepath.Join(next, "swarm", "9000", "report.html"))
	require.NoError(t, err)
	require.Equal(t, filepath.ToSlash(rel), d.Seeds[0].Report, "links reach the new run's reports from --out")

	r = simrunEnv(t, nil, "report", "diff", "--fail-on-any", "--out", out, base, next)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
}

func TestReportDiffBadInput(t *testing.T) {
	base := writeRun(t, "release", "pass")
	other := writeRun(t, "exploratory", "pass")
	empty := t.TempDir()
	garbage := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(garbage, "summary.json"), []byte("{not json"), 0o644))
	for _, c := range []struct {
		name     string
		args     []string
		mentions string
	}{
		{"one dir", []string{"report", "diff", base}, "accepts 2 arg"},
		{"missing dir", []string{"report", "diff", filepath.Join(empty, "nope"), base}, "no such directory"},
		{"no summary", []string{"report", "diff", base, empty}, "no summary.json"},
		{"garbage summary", []string{"report", "diff", garbage, base}, "baseline"},
		{"other suite", []string{"report", "diff", base, other}, `suite "release" and the new run suite "exploratory"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			usageError(t, simrunEnv(t, nil, c.args...), c.mentions)
		})
	}
}
