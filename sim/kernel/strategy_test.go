package kernel

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// busyRun runs n actors that each yield steps times, under strategy s, and
// returns the order in which they took their steps.
func busyRun(t *testing.T, s Scheduling, seed uint64, n, steps int) []string {
	t.Helper()
	rng := SeedTree{Root: seed}.Child("scheduler")
	k := New(rng, NewTrace(false))
	k.UseStrategy(s.New(rng))
	var order []string
	for i := range n {
		name := fmt.Sprint(i)
		k.Spawn("g", name, func(ctx context.Context) {
			a := ActorOf(ctx)
			for range steps {
				order = append(order, name)
				a.Yield()
			}
		})
	}
	require.NoError(t, k.Run(time.Hour, nil))
	k.Shutdown()
	return order
}

// PCT of depth 1 never preempts: the actor of highest priority runs until it
// finishes, so the order is n runs of one actor each.
func TestPCTDepthOneRunsByPriority(t *testing.T) {
	order := busyRun(t, Scheduling{Strategy: "pct", Depth: 1}, 7, 4, 50)
	runs := 1
	for i := 1; i < len(order); i++ {
		if order[i] != order[i-1] {
			runs++
		}
	}
	require.Equal(t, 4, runs, "order %s", strings.Join(order, ""))
}

// Deeper PCT preempts at its change points: more switches than depth 1, at
// most depth-1 more, and the same seed gives the same order.
func TestPCTChangePointsAreSeeded(t *testing.T) {
	s := Scheduling{Strategy: "pct", Depth: 3}
	p := newPCT(SeedTree{Root: 3}.Child("scheduler"), 3, 100)
	require.Len(t, p.changes, 2)
	a := busyRun(t, s, 11, 3, 40)
	b := busyRun(t, s, 11, 3, 40)
	require.Equal(t, a, b)
	uni := busyRun(t, Scheduling{}, 11, 3, 40)
	require.NotEqual(t, a, uni)
}

// A reseeded PCT keeps its past and draws the change points still to come.
func TestPCTReseededDrawsOnlyTheFuture(t *testing.T) {
	tree := NewSeedTree(5)
	p := newPCT(tree.Child("scheduler"), 4, 1000)
	p.picks = 600
	tree.Fork(Branch{Step: 600, N: 1})
	p.reseeded()
	require.Len(t, p.changes, 3)
	for _, c := range p.changes {
		require.GreaterOrEqual(t, c, 600)
	}
}

func TestParseSchedulingAndBranch(t *testing.T) {
	for in, want := range map[string]string{"uniform": "uniform", "pct": "pct:3", "pct:1": "pct:1", "pct:10": "pct:10"} {
		s, err := ParseScheduling(in)
		require.NoError(t, err, in)
		require.Equal(t, want, s.String())
	}
	for _, bad := range []string{"", "pct:0", "pct:11", "pct:x", "random", "uniform:2"} {
		_, err := ParseScheduling(bad)
		require.Error(t, err, bad)
	}
	b, err := ParseBranch("1200/3")
	require.NoError(t, err)
	require.Equal(t, Branch{Step: 1200, N: 3}, b)
	z, err := ParseBranch("1200/0")
	require.NoError(t, err)
	require.True(t, z.IsZero(), "branch 0 is the seed itself")
	f, err := ParseBranch("1200/3@j-12")
	require.NoError(t, err)
	require.Equal(t, Branch{Step: 1200, N: 3, Focus: "j-12"}, f)
	require.Equal(t, "1200/3@j-12", f.String(), "the focus is part of the key")
	for _, bad := range []string{"", "12", "a/1", "1/b", "-1/2", "1200/3@"} {
		_, err := ParseBranch(bad)
		require.Error(t, err, bad)
	}
}

// Fork reseeds the streams handed out and draws later ones for the branch;
// branch 0 is the seed's own stream.
func TestSeedTreeFork(t *testing.T) {
	plain := NewSeedTree(9).Child("bus").Uint64()
	tree := NewSeedTree(9)
	r := tree.Child("bus")
	tree.Fork(Branch{Step: 10, N: 1})
	forked := r.Uint64()
	require.NotEqual(t, plain, forked)
	other := NewSeedTree(9)
	r2 := other.Child("bus")
	other.Fork(Branch{Step: 10, N: 2})
	require.NotEqual(t, forked, r2.Uint64())
	again := NewSeedTree(9)
	again.Fork(Branch{Step: 10, N: 1})
	require.Equal(t, forked, again.Child("bus").Uint64(), "a stream made after the fork is the branch's too")
}
