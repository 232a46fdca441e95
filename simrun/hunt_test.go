package simrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeExplore writes a program that answers like explore: it writes found
// as findings.json into its --out and exits with code.
func fakeExplore(t *testing.T, found Findings, code int) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(found)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "findings.json"), b, 0o644))
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then out=$2; fi; shift; done\n" +
		"mkdir -p \"$out\" && cp " + filepath.Join(dir, "findings.json") + " \"$out/\"\nexit " + string(rune('0'+code)) + "\n"
	bin := filepath.Join(dir, "simrun")
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin
}

// A hunt's kill is the earliest run a named checker fired in, not a checker
// the mutant does not name; with none named, the checker --until stopped at.
func TestHuntReadsTheFirstNamedKill(t *testing.T) {
	found := Findings{SeedsRun: 300, BranchesRun: 40, RunSeconds: 12, Until: "no_resurrection",
		FirstFired: map[string]FirstFire{
			"metrics":          {Run: 2, Seconds: 0.1, Seed: 7000001},
			"transition_graph": {Run: 90, Seconds: 3, Seed: 7000050, Branch: "700/3@j-4"},
			"no_resurrection":  {Run: 60, Seconds: 2, Seed: 7000040},
		}}
	h := huntFlags{scenario: "swarm", budget: time.Minute}
	bin := fakeExplore(t, found, exitSafety)

	got := hunt(bin, t.TempDir(), huntMode{name: "seeds"}, 7000000, []string{"transition_graph", "no_resurrection"}, h)
	require.Equal(t, "", got.Error)
	require.True(t, got.Killed)
	require.Equal(t, "no_resurrection", got.Checker)
	require.Equal(t, 60, got.Runs)
	require.Equal(t, "seed 7000040", got.Key)

	got = hunt(bin, t.TempDir(), huntMode{name: "branch", branches: 8}, 7000000, []string{"transition_graph"}, h)
	require.Equal(t, "seed 7000050 branch 700/3@j-4", got.Key)

	got = hunt(bin, t.TempDir(), huntMode{name: "seeds"}, 7000000, nil, h)
	require.Equal(t, "no_resurrection", got.Checker, "a tool mutant's kill is what --until any stopped at")

	got = hunt(bin, t.TempDir(), huntMode{name: "seeds"}, 7000000, []string{"lock_exclusive"}, h)
	require.False(t, got.Killed)
	require.Equal(t, 340, got.Runs, "a hunt that did not kill counts every run")
	require.InDelta(t, 12, got.Seconds, 1e-9)

	got = hunt(fakeExplore(t, found, exitUsage), t.TempDir(), huntMode{name: "seeds"}, 7000000, nil, h)
	require.NotEmpty(t, got.Error, "a campaign that could not run is an error, not a survival")
	require.False(t, got.Killed)
}
