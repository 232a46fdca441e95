package sim

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain collects garbage at 4x the live heap, as simrun does: a seed's heap
// is small and short-lived, and the determinism tests run over a thousand of
// them. GOMAXPROCS stays at its default so those tests see real threads.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
