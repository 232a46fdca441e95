package scenarios

import (
	"os"
	"runtime"
	"testing"
)

// TestMain runs the suites on one P, as simrun does: the kernel passes a baton
// between goroutines one at a time, and on one P a pass wakes no other
// thread (the release suite ran in 16s instead of 29s on 2 cores). The sim
// package keeps the default, so its determinism tests still see real threads.
func TestMain(m *testing.M) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	os.Exit(m.Run())
}
