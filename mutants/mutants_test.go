package mutants

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/reports"
)

// Every mutant, built into simrun through an overlay, makes its scenario's
// release seeds fail with one of the checkers it names.
func TestEveryMutantIsKilled(t *testing.T) {
	longtest.Require(t, "builds one simrun per mutant")
	for _, m := range All {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			overlay, err := m.Overlay("..", dir)
			require.NoError(t, err)
			bin := filepath.Join(dir, "simrun")
			out, err := exec.Command("go", "build", "-overlay", overlay, "-o", bin, "../cmd/simrun").CombinedOutput()
			require.NoError(t, err, "the mutant must compile:\n%s", out)

			stdout, err := exec.Command(bin, "run", "--scenario", m.Scenario, "-j", "2", "--json",
				"--out", filepath.Join(dir, "out")).Output()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%s survived scenario %s", m.Name, m.Scenario)
			require.Contains(t, []int{1, 3}, exit.ExitCode(), "a violation, not a usage error: %s", exit.Stderr)

			var sum reports.Summary
			require.NoError(t, json.Unmarshal(stdout, &sum))
			found := map[string]int{}
			for _, s := range sum.Seeds {
				for _, v := range s.Violations {
					found[v.Checker]++
				}
			}
			killed := false
			for _, c := range m.Catches {
				killed = killed || found[c] > 0
			}
			require.True(t, killed, "%s failed, but not with %v: %v", m.Name, m.Catches, found)
			t.Logf("%s killed in %s: %v", m.Name, m.Scenario, found)
		})
	}
}

// A mutant whose edit no longer matches the engine is an error, never a
// silently unmutated build.
func TestStaleEditIsAnError(t *testing.T) {
	m := Mutant{Name: "stale", Edits: []Edit{{File: "engine/scheduler.go", From: "no such code", To: ""}}}
	_, err := m.Overlay("..", t.TempDir())
	require.ErrorContains(t, err, "no longer applies")
}

func TestCatalogNamesAreUniqueAndScenariosExist(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All {
		require.False(t, seen[m.Name], "duplicate mutant %s", m.Name)
		seen[m.Name] = true
		require.NotEmpty(t, m.Catches, m.Name)
		require.NotEmpty(t, m.Edits, m.Name)
	}
}
