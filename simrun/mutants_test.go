package simrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input to mutants and explore is one line on stderr and exit 2, before
// anything is built or run.
func TestMutantsAndExploreRejectBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"mutants", "--root", "..", "-j", "0"},
		{"mutants", "--root", "..", "--offsets", "0"},
		{"mutants", "--root", t.TempDir()},
		{"mutants", "--root", "..", "--only", "no-such-mutant"},
		{"mutants", "--root", "..", "--suite", "nightly"},
		{"mutants", "--root", "..", "--seeds", "1..9"},
		{"mutants", "--root", "..", "--scenario", "no-such-scenario"},
		{"mutants", "--root", "..", "--scenario", "swarm", "--seeds", "9..1"},
		{"mutants", "--root", "..", "--scenario", "swarm", "--suite", "release"},
		{"mutants", "--root", "..", "--gremlins", "/no/such/file.json"},
		{"explore"},
		{"explore", "--budget", "1m", "--date", "yesterday"},
		{"explore", "--budget", "1m", "--from", "x"},
		{"explore", "--budget", "1m", "--shard", "3/2"},
		{"explore", "--budget", "1m", "--known", "/no/such/findings.json"},
		{"explore", "--budget", "1m", "--until", "Exactly-Once"},
		{"explore", "--budget", "1m", "--shrink-budget", "-1s"},
		{"mutants", "--root", "..", "--hunt-budget", "1m"},
		{"mutants", "--root", "..", "--hunt", "seeds,bogus"},
		{"mutants", "--root", "..", "--hunt", "seeds,seeds"},
		{"mutants", "--root", "..", "--hunt", "uniform"},
		{"mutants", "--root", "..", "--hunt", "branch", "--hunt-branches", "0"},
		{"mutants", "--root", "..", "--hunt", "seeds", "--hunt-starts", "0"},
		{"mutants", "--root", "..", "--hunt", "seeds", "--hunt-from", "-3"},
		{"mutants", "--root", "..", "--hunt", "seeds", "--hunt-scenario", "no-such-scenario"},
		{"mutants", "--root", "..", "--hunt-scenario", "sparse-swarm"},
		{"explore", "--budget", "1m", "--scenario", "no-such-scenario"},
		{"explore", "--budget", "1m", "--system", "outbx"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, strings.NewReader(""), &stdout, &stderr)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr.String())
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%v: one line: %q", args, stderr.String())
	}
}

// --tool-only is a regular expression over the sites, checked before the
// gremlins file is read.
func TestMutantsToolOnlyMustCompile(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"mutants", "--root", "..", "--gremlins", "/no/such/file.json", "--tool-only", "engine/(strategy"},
		strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr.String(), "--tool-only: error parsing regexp")
}

// The modes of --hunt: seeds and branch, and a strategy as independent seeds
// under it; branch takes --hunt-branches.
func TestParseHuntModes(t *testing.T) {
	got, err := parseHuntModes("seeds, branch,pct:5", 8)
	require.NoError(t, err)
	require.Equal(t, []huntMode{{name: "seeds"}, {name: "branch", branches: 8}, {name: "pct:5", strategy: "pct:5"}}, got)
	for _, bad := range []string{"", "seeds,", "pct:99", "branch,branch"} {
		_, err := parseHuntModes(bad, 8)
		require.Error(t, err, bad)
	}
}
