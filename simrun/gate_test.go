package simrun

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/reports"
)

// The gate's promise, tested against the built binary: exit 0 means every
// seed ran and passed, and a red run replays from what it left behind.

const brokenEngine = "terminal-state-resurrection" // fails every seed of terminal-resurrection

func readSummary(t *testing.T, dir string) *reports.Summary {
	t.Helper()
	s, err := reports.ReadSummary(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	return s
}

// A budget that leaves seeds unrun is incomplete (exit 6), in every output;
// only an explicit --allow-incomplete turns it into a pass.
func TestBudgetLeavesTheRunIncomplete(t *testing.T) {
	out := t.TempDir()
	junit := filepath.Join(out, "junit.xml")
	r := simrun(t, simrunBin, "run", "--scenario", "swarm", "--count", "400", "-j", "1", "--budget", "1s", "--out", out, "--junit", junit)
	require.Equal(t, reports.ExitIncomplete, r.code, r.stdout+r.stderr)
	require.Regexp(t, `scenario:swarm: incomplete, \d+ of 400 seeds .*, \d+ not run \(budget 1s spent\)`, r.stdout)
	require.NotRegexp(t, `(?m)^ok `, r.stdout, "a case with unrun seeds never prints ok")
	require.Contains(t, r.stdout, "PART swarm")

	s := readSummary(t, out)
	require.Equal(t, reports.VerdictIncomplete, s.Verdict)
	require.Equal(t, 400, s.Planned)
	require.Equal(t, 400-len(s.Seeds), s.NotRun)
	require.Positive(t, s.NotRun)
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	require.Contains(t, string(index), "seeds not run")
	require.NotContains(t, string(index), "other shards", "no shards were used")
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(b), `type="incomplete"`)

	r = simrun(t, simrunBin, "run", "--scenario", "swarm", "--count", "400", "-j", "1", "--budget", "1s", "--allow-incomplete", "--out", out)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Regexp(t, `scenario:swarm: pass, \d+ of 400 seeds .*not run`, r.stdout, "still says what did not run")
}

// Merging needs every shard of one run: a missing one is exit 6 naming it; a
// shard of another run or build is refused.
func TestMergeNeedsEveryShard(t *testing.T) {
	base := t.TempDir()
	a, b, c := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "c")
	args := []string{"run", "--scenario", "no-pool-mapping-race", "--count", "4", "-j", "1"}
	require.Equal(t, 0, simrun(t, simrunBin, append(args, "--shard", "1/2", "--out", a)...).code)
	require.Equal(t, 0, simrun(t, simrunBin, append(args, "--shard", "2/2", "--out", b, "--commit", "other")...).code)
	require.Equal(t, 0, simrun(t, simrunBin, "run", "--scenario", "no-pool-mapping-race", "--count", "6", "-j", "1",
		"--shard", "2/2", "--out", c).code)

	r := simrun(t, simrunBin, "report", "merge", "--out", filepath.Join(base, "m"), a)
	require.Equal(t, reports.ExitIncomplete, r.code, r.stdout+r.stderr)
	require.Equal(t, "simrun: merge summaries: shard 2 of 2 missing: their seeds did not run here\n", r.stderr)
	require.Equal(t, reports.VerdictIncomplete, readSummary(t, filepath.Join(base, "m")).Verdict)

	usageError(t, simrun(t, simrunBin, "report", "merge", "--out", filepath.Join(base, "m"), a, b), `commit "other"`)
	usageError(t, simrun(t, simrunBin, "report", "merge", "--out", filepath.Join(base, "m"), a, c), "not shards of one run")
}

// A broken engine's run leaves artifacts; a new run into the same folder
// moves them aside (evidence is never deleted unasked), so a replay there is
// held to the new run, not a stale seed, and the old seed still replays
// from where it went.
func TestRunMovesTheLastRunsFoldersAside(t *testing.T) {
	bin := buildMutant(t, brokenEngine)
	out := t.TempDir()
	r := simrun(t, bin, "run", "--scenario", "terminal-resurrection", "--count", "2", "-j", "1", "--out", out)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
	require.FileExists(t, filepath.Join(out, "terminal-resurrection", "4000", "seed.json"))
	mine := filepath.Join(out, "terminal-resurrection", "notes.txt")
	require.NoError(t, os.WriteFile(mine, []byte("mine"), 0o644))

	r = simrun(t, simrunBin, "run", "--scenario", "terminal-resurrection", "--count", "2", "-j", "1", "--out", out)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	moved := filepath.Join(out, "previous-run-1")
	require.Contains(t, r.stderr, "moved 2 failing seed folders of a previous run from "+out+" to "+moved)
	require.Equal(t, 1, strings.Count(r.stderr, "previous run"), "one line")
	require.NoDirExists(t, filepath.Join(out, "terminal-resurrection", "4000"))
	require.FileExists(t, filepath.Join(moved, "terminal-resurrection", "4000", "seed.json"))
	require.FileExists(t, filepath.Join(moved, "summary.json"))
	require.FileExists(t, mine, "what simrun did not write stays")

	r = simrun(t, simrunBin, "replay", "--scenario", "terminal-resurrection", "--seed", "4000", "--out", out)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "matches "+filepath.Join(out, "summary.json"))
	require.Contains(t, r.stderr, "has terminal-resurrection seed 4000 as pass")
	r = simrun(t, bin, "replay", "--from", filepath.Join(moved, "terminal-resurrection", "4000"))
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)

	// Told to, it deletes; a run with nothing failing before moves nothing.
	r = simrun(t, bin, "run", "--scenario", "terminal-resurrection", "--count", "1", "-j", "1", "--out", out)
	require.Equal(t, exitSafety, r.code)
	r = simrun(t, simrunBin, "run", "--scenario", "terminal-resurrection", "--count", "1", "-j", "1", "--out", out,
		"--discard-previous")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "removed 1 seed folders of a previous run")
	require.NoDirExists(t, filepath.Join(out, "previous-run-2"))
}

// A failing run's every replay line names its folder; the folder replays
// with its recorded plan and checksum; a corrupt record is exit 2, never a
// quiet "matches a second run".
func TestReplayFromTheArtifacts(t *testing.T) {
	bin := buildMutant(t, brokenEngine)
	out := t.TempDir()
	junit := filepath.Join(out, "junit.xml")
	r := simrun(t, bin, "run", "--scenario", "terminal-resurrection", "--count", "3", "-j", "2", "--out", out, "--junit", junit,
		"--commit", "c0ffee")
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
	dir := filepath.Join(out, "terminal-resurrection", "4001")
	line := "simrun replay --from " + dir
	require.Contains(t, r.stdout, "  replay: "+line+"\n")
	for _, f := range []string{"index.html", filepath.Join("terminal-resurrection", "4001", "report.html"), "junit.xml", "summary.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		require.Contains(t, string(b), line, f)
	}
	seedJSON, err := os.ReadFile(filepath.Join(dir, "seed.json"))
	require.NoError(t, err)
	require.Contains(t, string(seedJSON), `"commit": "c0ffee"`)
	require.Equal(t, "c0ffee", readSummary(t, out).Provenance.Commit)

	r = simrun(t, bin, "replay", "--from", dir, "--commit", "c0ffee")
	require.Equal(t, exitSafety, r.code, r.stderr)
	require.Contains(t, r.stdout, "matches "+filepath.Join(dir, "seed.json"))
	require.Empty(t, r.stderr)
	require.FileExists(t, filepath.Join(dir, "replay", "report.html"), "a replay writes beside the record, not over it")

	r = simrun(t, bin, "replay", "--from", dir, "--commit", "beef")
	require.Equal(t, exitSafety, r.code, r.stderr)
	require.Contains(t, r.stderr, "warning:")
	require.Contains(t, r.stderr, "c0ffee")

	r = simrun(t, simrunBin, "replay", "--from", dir, "--commit", "c0ffee")
	require.Equal(t, exitNondeterministic, r.code, "the real engine does not reproduce the broken one's run")

	usageError(t, simrun(t, bin, "replay", "--from", dir, "--seed", "4002"), "holds seed 4001")
	usageError(t, simrun(t, bin, "replay", "--from", dir, "--checksum", "0123456789abcdef"), "drop --checksum")
	usageError(t, simrun(t, bin, "replay", "--from", filepath.Join(dir, "seed.json")), "not a directory")
	usageError(t, simrun(t, bin, "replay", "--scenario", "swarm", "--seed", "1", "--out", filepath.Join(dir, "seed.json")), "not a directory")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.json"), []byte("{"), 0o644))
	usageError(t, simrun(t, bin, "replay", "--from", dir), "plan.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "seed.json"), []byte(`{"scenario": "terminal-resurrection", "seed": 40`), 0o644))
	usageError(t, simrun(t, bin, "replay", "--from", dir), "corrupt")
	usageError(t, simrun(t, bin, "replay", "--scenario", "terminal-resurrection", "--seed", "4001", "--out", out), "corrupt")
	require.NoError(t, os.Remove(filepath.Join(dir, "seed.json")))
	usageError(t, simrun(t, bin, "replay", "--from", dir), "seed.json")

	// JUnit has the failing seed as its own test case.
	var suite struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &suite))
	names := map[string]bool{}
	for _, c := range suite.Cases {
		names[c.Name] = true
		if c.Name == "terminal-resurrection/4001" {
			require.NotNil(t, c.Failure)
			require.Contains(t, c.Failure.Message, "invariants/")
			require.Contains(t, c.Failure.Body, "replay: "+line)
		}
	}
	for _, want := range []string{"terminal-resurrection/4000", "terminal-resurrection/4001", "terminal-resurrection/4002"} {
		require.True(t, names[want], "JUnit lists %s: %v", want, names)
	}
}

// One broken engine does not flood: artifacts are capped, failures grouped,
// summary.json keeps every failing seed; --fail-fast stops at the first.
func TestFailuresStayReadable(t *testing.T) {
	bin := buildMutant(t, brokenEngine)
	out := t.TempDir()
	r := simrun(t, bin, "run", "--scenario", "terminal-resurrection", "--count", "12", "-j", "2", "--max-artifacts", "3", "--out", out)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
	folders, err := os.ReadDir(filepath.Join(out, "terminal-resurrection"))
	require.NoError(t, err)
	require.Len(t, folders, 3)
	s := readSummary(t, out)
	failed := 0
	for _, seed := range s.Seeds {
		if seed.Verdict != reports.VerdictPass {
			failed++
		}
	}
	require.Equal(t, 12, failed, "summary.json keeps every failing seed")
	require.NotEmpty(t, s.Groups)
	require.Equal(t, 12, s.Groups[0].Count+sumCounts(s.Groups[1:]))
	require.Contains(t, r.stdout, "GROUP terminal-resurrection / ")
	require.Equal(t, 3, strings.Count(r.stdout, "\nFAIL terminal-resurrection seed ")+boolInt(strings.HasPrefix(r.stdout, "FAIL terminal-resurrection seed ")),
		"failures told in full only for the seeds with artifacts")
	require.Less(t, strings.Count(r.stderr, "\n"), 25, "live failure lines are capped: %s", r.stderr)

	out = t.TempDir()
	r = simrun(t, bin, "run", "--scenario", "terminal-resurrection", "--count", "30", "-j", "1", "--fail-fast", "--out", out)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
	s = readSummary(t, out)
	require.Len(t, s.Seeds, 1)
	require.Equal(t, 29, s.NotRun)
	require.Contains(t, s.Stopped, "--fail-fast")
}

func sumCounts(gs []reports.FailureGroup) int {
	n := 0
	for _, g := range gs {
		n += g.Count
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Outputs are checked before the first seed; an empty value or --count 0 is
// a usage error, not the default.
func TestInputsAndOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	start := time.Now()
	r := simrun(t, simrunBin, "run", "--suite", "release", "--junit", filepath.Join(file, "junit.xml"), "--out", filepath.Join(dir, "o"))
	usageError(t, r, "--junit")
	require.Less(t, time.Since(start), 20*time.Second, "refused before the suite ran")
	require.NoFileExists(t, filepath.Join(dir, "o", "summary.json"))
	usageError(t, simrun(t, simrunBin, "run", "--scenario", "swarm", "--count", "1", "--junit", dir), "is a directory")

	for _, args := range [][]string{
		{"run", "--scenario", ""}, {"run", "--suite", ""}, {"run", "--seed", ""}, {"run", "--seeds", ""},
		{"run", "--out", ""}, {"run", "--junit", ""}, {"run", "--shard", ""}, {"replay", "--scenario", "swarm", "--seed", ""},
		{"replay", "--from", ""}, {"report", "merge", "--out", "", dir}, {"run", "--commit", ""},
	} {
		usageError(t, simrun(t, simrunBin, args...), "empty value")
	}
	usageError(t, simrun(t, simrunBin, "run", "--scenario", "swarm", "--count", "0"), "--count 0")
	usageError(t, simrun(t, simrunBin, "run", "--scenario", "swarm", "--max-artifacts", "-1"), "--max-artifacts")
	usageError(t, simrun(t, simrunBin, "run", "--scenario", "swarm", "--allow-incomplete"), "needs a --budget")
}

// SIGTERM (and SIGINT) mid-run: the parent stops the workers, writes an
// interrupted summary and index with the seeds done, exits 143 (130), and no
// file changes after it has exited.
func TestInterruptWritesAnInterruptedSummary(t *testing.T) {
	bin := buildMutant(t, brokenEngine)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
		jobs string
	}{{syscall.SIGTERM, 143, "SIGTERM", "2"}, {syscall.SIGINT, 130, "SIGINT", "1"}} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(bin, "run", "--scenario", "terminal-resurrection", "--count", "2000", "-j", c.jobs, "--out", out)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			waitFor(t, &stderr, "seeds/s")
			require.NoError(t, cmd.Process.Signal(c.sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, stdout.String()+stderr.String())
			require.Equal(t, c.code, ee.ExitCode(), stdout.String()+stderr.String())
			require.Contains(t, stderr.String(), c.name+": stopping the workers")

			s := readSummary(t, out)
			require.Equal(t, reports.VerdictInterrupted, s.Verdict)
			require.Equal(t, c.name, s.InterruptedBy)
			require.NotEmpty(t, s.Seeds, "the seeds done so far")
			require.Equal(t, 2000-len(s.Seeds), s.NotRun)
			require.FileExists(t, filepath.Join(out, "index.html"))

			before := snapshot(t, out)
			time.Sleep(1500 * time.Millisecond)
			require.Equal(t, before, snapshot(t, out), "nothing is written after simrun exits")
			for name := range before {
				require.NotContains(t, name, ".tmp-", "no torn write left behind")
			}
		})
	}
}

// waitFor waits until the process has written want to w (a progress line).
func waitFor(t *testing.T, w *bytes.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(w.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, w.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// snapshot is every file under dir with its size and modification time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m[path] = info.ModTime().String() + " " + string(rune(info.Size()))
		return nil
	}))
	return m
}

// In GitHub Actions: a Markdown step summary and ::error annotations.
func TestGitHubActionsOutputs(t *testing.T) {
	bin := buildMutant(t, brokenEngine)
	out := t.TempDir()
	summary := filepath.Join(out, "step-summary.md")
	cmd := exec.Command(bin, "run", "--scenario", "terminal-resurrection", "--count", "2", "-j", "1", "--out", out, "--max-artifacts", "1")
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary)
	stdout, _ := cmd.Output()
	require.Contains(t, string(stdout), "::error title=terminal-resurrection%3A ")
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.Contains(t, string(md), "### simrun scenario:terminal-resurrection: safety violation")
	require.Contains(t, string(md), "| terminal-resurrection |")
	require.Contains(t, string(md), "`simrun replay --from "+filepath.Join(out, "terminal-resurrection", "4000")+"`")

	var s reports.Summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	require.Equal(t, "simrun replay --out "+out+" --scenario terminal-resurrection --seed 4001", s.Seeds[1].Replay,
		"over the artifact cap, the seed replays from summary.json")
}

// A merged folder stands alone: every failing seed's folder is copied in and
// every link of the merged index opens a file inside it.
func TestMergedArtifactIsSelfContained(t *testing.T) {
	bin := buildMutant(t, brokenEngine)
	base := t.TempDir()
	a, b, merged := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "merged")
	args := []string{"run", "--scenario", "terminal-resurrection", "--count", "4", "-j", "1", "--max-artifacts", "1"}
	require.Equal(t, exitSafety, simrun(t, bin, append(args, "--shard", "1/2", "--out", a)...).code)
	require.Equal(t, exitSafety, simrun(t, bin, append(args, "--shard", "2/2", "--out", b)...).code)
	r := simrun(t, bin, "report", "merge", "--out", merged, a, b)
	require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
	require.NoError(t, os.RemoveAll(a))
	require.NoError(t, os.RemoveAll(b))

	index, err := os.ReadFile(filepath.Join(merged, "index.html"))
	require.NoError(t, err)
	hrefs := regexp.MustCompile(`href="([^"#]+)"`).FindAllStringSubmatch(string(index), -1)
	require.NotEmpty(t, hrefs)
	for _, h := range hrefs {
		if strings.Contains(h[1], "://") {
			continue
		}
		require.FileExists(t, filepath.Join(merged, filepath.FromSlash(h[1])), "index link %s", h[1])
	}
	s := readSummary(t, merged)
	withFolder := 0
	for _, seed := range s.Seeds {
		if seed.Artifacts != "" {
			withFolder++
			require.Equal(t, "simrun replay --from "+filepath.Join(merged, seed.Artifacts), seed.Replay)
			require.FileExists(t, filepath.Join(merged, seed.Artifacts, "seed.json"))
		}
	}
	require.Equal(t, 2, withFolder, "one folder from each shard")
	r = simrun(t, bin, "replay", "--from", filepath.Join(merged, "terminal-resurrection", "4000"))
	require.Equal(t, exitSafety, r.code, r.stderr)
}
