package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// mapOrderRun runs one actor that reads sixteen keys, in Go map iteration
// order when fromMap is set (a determinism bug: the Go runtime, not the seed,
// picks the order) and in sorted order otherwise. It returns the trace and the
// order the actor used.
func mapOrderRun(t *testing.T, fromMap bool) ([]byte, uint64, []string) {
	t.Helper()
	w := NewWorld(Config{System: cordum.System{}, Seed: 7, KeepTrace: true})
	t.Cleanup(w.store.Close)
	c := w.store.Client("meta")
	keys := map[string]bool{}
	for i := range 16 {
		keys[fmt.Sprintf("key-%02d", i)] = true
	}
	var order []string
	w.k.Spawn("meta", "reader", func(ctx context.Context) {
		for k := range keys {
			order = append(order, k)
		}
		if !fromMap {
			sort.Strings(order)
		}
		for _, k := range order {
			_ = c.Get(ctx, k).Err()
		}
	})
	require.NoError(t, w.k.Run(time.Hour, nil))
	return append([]byte(nil), w.Trace().Bytes()...), w.Trace().Checksum(), order
}

// The determinism check catches an actor that draws from map order, and names
// the first trace line on which two runs of the same seed part: the line where
// the actor's first differently ordered read was traced.
func TestDeterminismCheckNamesFirstDifferingLine(t *testing.T) {
	a, sumA, _ := mapOrderRun(t, false)
	b, sumB, _ := mapOrderRun(t, false)
	_, differ := kernel.FirstTraceDifference(a, b)
	require.False(t, differ, "sorted reads are deterministic")
	require.Equal(t, sumA, sumB)

	// Map order repeats now and then; a handful of pairs is enough to see it move.
	for attempt := 0; attempt < 20; attempt++ {
		a, sumA, orderA := mapOrderRun(t, true)
		b, sumB, orderB := mapOrderRun(t, true)
		diff, differ := kernel.FirstTraceDifference(a, b)
		first := firstIndexDiffering(orderA, orderB)
		if first < 0 {
			require.False(t, differ, "same order, same trace")
			require.Equal(t, sumA, sumB)
			continue
		}
		require.True(t, differ, "a different read order must show in the trace")
		require.NotEqual(t, sumA, sumB)
		require.Contains(t, diff.A, "get "+orderA[first], "line %d names A's read", diff.Line)
		require.Contains(t, diff.B, "get "+orderB[first], "line %d names B's read", diff.Line)
		linesA, linesB := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
		require.Equal(t, linesA[:diff.Line-1], linesB[:diff.Line-1], "every line before the reported one agrees")
		require.Equal(t, diff.A, linesA[diff.Line-1])
		t.Logf("map order caught on attempt %d, trace line %d:\n  %s\n  %s", attempt+1, diff.Line, diff.A, diff.B)
		return
	}
	t.Fatal("map iteration order never changed in 20 pairs of runs")
}

func firstIndexDiffering(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
