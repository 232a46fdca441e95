package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

func visualize(t *testing.T, m porcupine.Model, info porcupine.LinearizationInfo) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.html")
	require.NoError(t, porcupine.VisualizePath(m, info, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestJobLifecycleVisualization(t *testing.T) {
	h := history(toRunning("j"), []porcupine.Operation{
		SubmitOp(1, 1, 2, "j"),
		ReadUnknownOp(2, 15, "j"),
		CommitOp(0, 50, "j", StateRunning, StateSucceeded),
		CommitOp(0, 60, "j", StateSucceeded, StatePending),
	})
	res, info := porcupine.CheckOperationsVerbose(engineLifecycle, h, 0)
	require.Equal(t, porcupine.Illegal, res)
	info.AddAnnotations([]porcupine.Annotation{{Tag: "faults", Start: 45, Description: "PublishAfterStoreReplyLost"}})

	html := visualize(t, engineLifecycle, info)
	for _, want := range []string{
		"commit (none)→PENDING", "commit SUCCEEDED→PENDING", "read → ? (unknown)", "submit",
		"SUCCEEDED", "PublishAfterStoreReplyLost",
	} {
		require.Contains(t, html, want)
	}
}

func TestRunAdmissionVisualization(t *testing.T) {
	h := []porcupine.Operation{
		StartRunUnknownOp(0, 1, "k1", "fp"),
		StartRunOp(1, 2, 3, "k1", "fp", 200, "run-7"),
		StartRunOp(2, 4, 5, "k1", "fp", 200, "run-8"),
	}
	res, info := porcupine.CheckOperationsVerbose(RunAdmission, h, 0)
	require.Equal(t, porcupine.Illegal, res)
	html := visualize(t, RunAdmission, info)
	for _, want := range []string{"start_run k1 → ? (unknown)", "start_run k1 → 200 run-8", "run-7 fp=fp"} {
		require.Contains(t, html, want)
	}
}
