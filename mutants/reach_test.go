package mutants

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const reachSrc = `package engine

func gate(s string) int {
	switch {
	case s == "a" || s == "b":
		return 1
	case s != "c":
		return 2
	}
	if s == "" {
		return 3
	}
	return 4
}
`

// A switch case's expression lies outside the cover tool's blocks; it is
// reached when its switch ran.
func TestCaseExpressionsAreReachedWhenTheirSwitchRan(t *testing.T) {
	write := func(profile string) *Coverage {
		path := filepath.Join(t.TempDir(), "cover.out")
		require.NoError(t, os.WriteFile(path, []byte(profile), 0o644))
		cv, err := ReadCoverage(path)
		require.NoError(t, err)
		return cv
	}
	// The switch ran and returned from its first case.
	cv := write(`mode: set
github.com/dispatchsim/dispatchsim/engine/gate.go:3.27,4.2 1 1
github.com/dispatchsim/dispatchsim/engine/gate.go:5.28,6.11 1 1
github.com/dispatchsim/dispatchsim/engine/gate.go:7.16,8.11 1 0
github.com/dispatchsim/dispatchsim/engine/gate.go:10.2,10.13 1 0
github.com/dispatchsim/dispatchsim/engine/gate.go:10.13,12.3 1 0
github.com/dispatchsim/dispatchsim/engine/gate.go:13.2,13.10 1 0
`)
	src := []byte(reachSrc)
	require.True(t, cv.Reached("engine/gate.go", src, 5, 9), "the first case's ==")
	require.True(t, cv.Reached("engine/gate.go", src, 7, 9), "a later case's != is inside its switch")
	require.False(t, cv.Reached("engine/gate.go", src, 8, 3), "a case body that never ran")
	require.False(t, cv.Reached("engine/gate.go", src, 10, 7), "an if condition in a block that never ran")
	require.False(t, cv.Reached("engine/other.go", src, 5, 9), "a file the profile does not hold")

	never := write("mode: set\ngithub.com/dispatchsim/dispatchsim/engine/gate.go:3.27,4.2 1 0\n")
	require.False(t, never.Reached("engine/gate.go", src, 5, 9), "the switch never ran")

	_, err := ReadCoverage(filepath.Join(t.TempDir(), "missing.out"))
	require.Error(t, err)
	bad := filepath.Join(t.TempDir(), "bad.out")
	require.NoError(t, os.WriteFile(bad, []byte("mode: set\nnot a block\n"), 0o644))
	_, err = ReadCoverage(bad)
	require.ErrorContains(t, err, "not a coverage block")
}
