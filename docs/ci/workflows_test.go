// Package ci holds the CI examples; its test lints them as GitHub would
// read them.
package ci

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/require"
)

// The reusable gate and its caller pass actionlint: expressions, inputs,
// matrix and job outputs are checked, not just the YAML.
func TestWorkflowsPassActionlint(t *testing.T) {
	files := []string{
		filepath.Join("..", "..", ".github", "workflows", "simrun-gate.yml"),
		"github-actions-release.yml",
		"github-actions-nightly.yml",
	}
	var out bytes.Buffer
	linter, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{Oneline: true})
	require.NoError(t, err)
	errs, err := linter.LintFiles(files, nil)
	require.NoError(t, err)
	require.Empty(t, errs, out.String())
}

// The linter is not a formality: a workflow with an undefined input fails it.
func TestActionlintCatchesABrokenWorkflow(t *testing.T) {
	broken := []byte(`on:
  workflow_call:
    inputs:
      suite:
        type: string
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ inputs.suit }}"
`)
	var out bytes.Buffer
	linter, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{Oneline: true})
	require.NoError(t, err)
	errs, err := linter.Lint("broken.yml", broken, nil)
	require.NoError(t, err)
	require.NotEmpty(t, errs)
	require.Contains(t, out.String(), "suit")
}
