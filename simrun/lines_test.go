package simrun

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/reports"
)

// Every line a run prints to reproduce a seed of a system that is not the
// build's default (console, index, seed report, JUnit, summary.json, the
// GitHub step summary) reproduces that seed when pasted: it names the system,
// and a replay matches the recorded checksum instead of running the default
// system and calling the difference nondeterminism.
func TestPrintedLinesReproduceForANonDefaultSystem(t *testing.T) {
	bin := buildMutantOf(t, brokenEngine, "./testdata/otherdefault", "gate")
	out := t.TempDir()
	junit, steps := filepath.Join(out, "junit.xml"), filepath.Join(out, "steps.md")
	r := simrunWith(t, bin, []string{"GITHUB_STEP_SUMMARY=" + steps}, "run", "--system", "cordum",
		"--scenario", "terminal-resurrection", "--count", "3", "-j", "1", "--max-artifacts", "1", "--out", out, "--junit", junit)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)

	line := regexp.MustCompile("gate (?:replay|shrink) [^<\\n\"|`]*[^<\\n\"|`\\s]")
	lines := map[string]string{}
	collect := func(where, text string) {
		found := line.FindAllString(html.UnescapeString(text), -1)
		require.NotEmpty(t, found, "%s prints no replay line", where)
		for _, l := range found {
			lines[strings.TrimSpace(l)] = where
		}
	}
	collect("console", r.stdout)
	require.Regexp(t, `(?m)^  replay: gate replay --from .*\n  shrink: gate shrink --system cordum `, r.stdout,
		"the console prints the shrink line under the replay line")
	for _, f := range []string{"index.html", "junit.xml", "steps.md", "summary.json",
		filepath.Join("terminal-resurrection", "4000", "report.html")} {
		b, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		collect(f, string(b))
	}
	var sum reports.Summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	overCap := 0
	for _, seed := range sum.Seeds {
		if seed.Verdict != reports.VerdictPass && seed.Artifacts == "" {
			overCap++
			require.Contains(t, seed.Replay, "--system cordum --scenario terminal-resurrection")
		}
	}
	require.Equal(t, 2, overCap, "--max-artifacts 1 leaves two failing seeds without a folder")
	kinds := map[string]bool{}
	for l, where := range lines {
		args := strings.Fields(l)[1:]
		switch {
		case args[0] == "shrink":
			kinds["shrink"] = true
			require.Contains(t, l, "--system cordum", "%s: %s", where, l)
			args = append(args, "--out", filepath.Join(t.TempDir(), "shrunk"), "--budget", "20s")
			p := simrun(t, bin, args...)
			require.NotEqual(t, exitNondeterministic, p.code, "%s: %s\n%s", where, l, p.stderr)
			require.Contains(t, p.stdout, "fails", "%s: %s passes when pasted", where, l)
		case strings.Contains(l, "--from"):
			kinds["replay --from"] = true
			p := simrun(t, bin, args...)
			require.Equal(t, exitSafety, p.code, "%s: %s\n%s%s", where, l, p.stdout, p.stderr)
		default:
			kinds["replay --scenario"] = true
			require.Contains(t, l, "--system cordum", "%s: %s", where, l)
			p := simrun(t, bin, args...)
			require.Equal(t, exitSafety, p.code, "%s: %s\n%s%s", where, l, p.stdout, p.stderr)
		}
	}
	require.Equal(t, map[string]bool{"shrink": true, "replay --from": true, "replay --scenario": true}, kinds)

	// A replay by name under the run's --out, without --system, replays the
	// system the run recorded, not the build's default; naming another
	// system is refused before anything runs.
	p := simrun(t, bin, "replay", "--scenario", "terminal-resurrection", "--seed", "4001", "--out", out)
	require.Equal(t, exitSafety, p.code, p.stdout+p.stderr)
	usageError(t, simrun(t, bin, "replay", "--system", "outbox", "--scenario", "terminal-resurrection", "--seed", "4001",
		"--out", out), "on system cordum, not outbox")
}
