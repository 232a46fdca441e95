package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A run that can never progress is reported as a deadlock with the trace tail,
// not a hang.
func TestDeadlockIsReported(t *testing.T) {
	k := New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(true))
	k.Spawn("g", "stuck", func(ctx context.Context) {
		a := ActorOf(ctx)
		a.runnable = false
		a.park() // nothing will ever wake it
	})
	err := k.Run(time.Hour, nil)
	var dl *ErrDeadlock
	require.ErrorAs(t, err, &dl)
	require.Equal(t, []string{"g/stuck"}, dl.Actors)
	require.True(t, strings.Contains(dl.Tail, "actor=g/stuck run"), dl.Tail)
	k.Shutdown()
}

func TestParseSeed(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		err  string
	}{
		{"42", 42, ""},
		{"0x2a", 42, ""},
		{"0X2A", 42, ""},
		{"d4742d3f0c7e4b8a9e1f2a3b4c5d6e7f80911223", 0xd4742d3f0c7e4b8a, ""},
		{"", 0, "empty"},
		{"-1", 0, "not a decimal"},
		{"0xzz", 0, "not valid hex"},
		{"12abc", 0, "not a decimal"},
		{"18446744073709551616", 0, "not a decimal"},
	}
	for _, c := range cases {
		got, err := ParseSeed(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}

func TestSeedTreeChildrenAreIndependent(t *testing.T) {
	a := SeedTree{Root: 1}.Child("workload")
	b := SeedTree{Root: 1}.Child("workload")
	c := SeedTree{Root: 1}.Child("bus")
	d := SeedTree{Root: 2}.Child("workload")
	x := a.Uint64()
	require.Equal(t, x, b.Uint64())
	require.NotEqual(t, x, c.Uint64())
	require.NotEqual(t, x, d.Uint64())
}

func TestFirstTraceDifference(t *testing.T) {
	cases := []struct {
		a, b   string
		differ bool
		want   TraceDifference
	}{
		{"x\ny\n", "x\ny\n", false, TraceDifference{}},
		{"", "", false, TraceDifference{}},
		{"x\ny\nz\n", "x\nq\nz\n", true, TraceDifference{Line: 2, A: "y", B: "q"}},
		{"x\n", "x\ny\n", true, TraceDifference{Line: 2, A: "", B: "y"}},
		{"x\ny\n", "x\n", true, TraceDifference{Line: 2, A: "y", B: ""}},
		{"a\n", "b\n", true, TraceDifference{Line: 1, A: "a", B: "b"}},
	}
	for _, c := range cases {
		got, differ := FirstTraceDifference([]byte(c.a), []byte(c.b))
		require.Equal(t, c.differ, differ, "%q vs %q", c.a, c.b)
		require.Equal(t, c.want, got, "%q vs %q", c.a, c.b)
	}
}
