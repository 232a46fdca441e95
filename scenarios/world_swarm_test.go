package scenarios

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The engine's re-publish window is measured on replica clocks, so every drawn
// world keeps docs/how-it-works.md's rule: engine window + widest skew between replicas
// + publish latency stays inside the broker's window (world-swarm 2003699
// drew one that did not, and the harness blamed the engine for the draw).
func TestWorldSwarmDrawsAnEngineWindowTheSkewCannotOutrun(t *testing.T) {
	covered, starved := 0, 0
	for seed := uint64(0); seed < 2000; seed++ {
		w, _ := drawWorld(seed, World{})
		if w.Bus == nil || !w.Bus.Dedup {
			continue
		}
		spread := slices.Max(w.ReplicaSkew) - slices.Min(w.ReplicaSkew)
		require.Positive(t, w.Options.DedupWindow, "seed %d", seed)
		if w.Options.DedupWindow == time.Millisecond {
			starved++
			continue
		}
		covered++
		require.Less(t, w.Options.DedupWindow+spread+maxPublishLatency, w.Bus.DedupWindow,
			"seed %d: engine %s + skew spread %s + latency outruns the broker's %s", seed, w.Options.DedupWindow, spread, w.Bus.DedupWindow)
	}
	require.Positive(t, covered, "some worlds re-publish inside the window")
	require.Positive(t, starved, "some worlds have no room left and re-publish nothing")
}

func TestEngineDedupWindow(t *testing.T) {
	skew := []time.Duration{-time.Minute, 30 * time.Second}
	require.Equal(t, 45*time.Second, engineDedupWindow(3*time.Minute+5*time.Second, skew, 50), "(185s - 90s - 5s) * 50%")
	require.Equal(t, time.Millisecond, engineDedupWindow(time.Minute, skew, 89), "skew outruns the broker")
	require.Equal(t, 45*time.Second, engineDedupWindow(55*time.Second, []time.Duration{0}, 90))
}
