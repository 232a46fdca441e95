package simrun

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every replay and shrink line a failing seed prints reproduces that very
// run when pasted, for every variant a seed can have: another system than
// the build's default, a scheduling strategy (fixed, or drawn per seed), a
// shard of a run, and a branch of a seed, focused on a job or not. Every
// seed of the broken engine fails, so a failing paste proves nothing: each
// pasted line must run the recorded checksum (a replay says which it ran; a
// shrink records the run it starts from).
func TestEveryPrintedLineRoundTrips(t *testing.T) {
	bin := buildMutantOf(t, brokenEngine, "./testdata/otherdefault", "gate")
	line := regexp.MustCompile(`(?m)^\s*(?:replay|shrink): (gate (?:replay|shrink) .*)$`)
	ran := regexp.MustCompile(`checksum ([0-9a-f]{16}) matches`)
	for _, v := range []struct {
		name string
		args []string
	}{
		{"system", []string{"run", "--system", "cordum", "--scenario", "terminal-resurrection", "--seed", "4000"}},
		{"strategy", []string{"run", "--system", "cordum", "--scenario", "terminal-resurrection", "--seed", "4001",
			"--strategy", "pct:3"}},
		{"drawn strategy", []string{"run", "--system", "cordum", "--scenario", "terminal-resurrection", "--seed", "4002",
			"--strategy", "swarm"}},
		{"shard", []string{"run", "--system", "cordum", "--scenario", "terminal-resurrection", "--count", "2",
			"--shard", "2/2"}},
		{"branch", []string{"replay", "--system", "cordum", "--scenario", "terminal-resurrection", "--seed", "4003",
			"--branch", "40/2"}},
		{"focused branch", []string{"replay", "--system", "cordum", "--scenario", "terminal-resurrection", "--seed", "4003",
			"--branch", "40/3@j-1"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append(v.args, "--out", out)
			if v.args[0] != "replay" {
				args = append(args, "-j", "1")
			}
			r := simrun(t, bin, args...)
			require.Equal(t, exitSafety, r.code, r.stdout+r.stderr)
			want := recordedChecksumIn(t, out)
			lines := line.FindAllStringSubmatch(r.stdout+r.stderr, -1)
			require.NotEmpty(t, lines, "no line to paste:\n%s%s", r.stdout, r.stderr)
			kinds := map[string]bool{}
			for _, m := range lines {
				args := strings.Fields(m[1])[1:]
				kinds[args[0]] = true
				if !strings.Contains(m[1], " --from ") { // a folder records its system
					require.Contains(t, m[1], "--system cordum", m[1])
				}
				if args[0] == "shrink" {
					shrunk := filepath.Join(t.TempDir(), "shrunk")
					p := simrun(t, bin, append(args, "--out", shrunk, "--budget", "5s")...)
					require.Contains(t, p.stdout, "fails", "%s passes when pasted", m[1])
					require.Equal(t, want, recordedChecksumIn(t, shrunk), "%s shrinks another run", m[1])
					continue
				}
				p := simrun(t, bin, args...)
				require.Equal(t, exitSafety, p.code, "%s\n%s%s", m[1], p.stdout, p.stderr)
				got := ran.FindStringSubmatch(p.stdout)
				require.NotNil(t, got, p.stdout)
				require.Equal(t, want, got[1], "%s replays another run", m[1])
			}
			require.True(t, kinds["replay"] && kinds["shrink"], "%v", kinds)
		})
	}
}

// recordedChecksumIn is the checksum of the one failing run recorded under
// out (its seed.json, however deep its variant's folder).
func recordedChecksumIn(t *testing.T, out string) string {
	t.Helper()
	var found []string
	require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "seed.json" && !strings.Contains(path, string(filepath.Separator)+"min"+string(filepath.Separator)) {
			found = append(found, path)
		}
		return err
	}))
	require.Len(t, found, 1, "one recorded run under %s: %v", out, found)
	r, err := readSeedJSON(found[0])
	require.NoError(t, err)
	return r.Checksum
}
