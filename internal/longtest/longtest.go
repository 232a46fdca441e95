// Package longtest is the one switch between the quick test run a newcomer
// lives with (`go test ./...`) and the exhaustive one CI runs
// (`DISPATCHSIM_LONG=1 go test ./...`): many-seed determinism checks, every
// mutant, long random state-machine runs.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long tests on.
const Env = "DISPATCHSIM_LONG"

// Enabled reports whether the long tests run.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Require skips t unless the long tests run; why says what the test covers.
func Require(t testing.TB, why string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test (%s): set %s=1 to run it", why, Env)
	}
}

// Pick returns long when the long tests run and quick otherwise: a test that
// is useful at both sizes scales its seed count with it.
func Pick[T any](quick, long T) T {
	if Enabled() {
		return long
	}
	return quick
}
