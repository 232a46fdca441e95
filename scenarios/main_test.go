package scenarios

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestMain runs the suites on one P, as simrun does: the kernel passes a baton
// between goroutines one at a time, and on one P a pass wakes no other
// thread (the release suite ran in 16s instead of 29s on 2 cores). The sim
// package keeps the default, so its determinism tests still see real threads.
// The GC runs at 4x the live heap, as in simrun, for the same reason.
func TestMain(m *testing.M) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
