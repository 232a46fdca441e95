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

// Actors that keep running while virtual time never moves (a poll every 0s)
// stop the run with a livelock, after a bounded number of steps.
func TestLivelockIsReported(t *testing.T) {
	k := New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(false))
	k.livelockAfter = 1000
	k.Spawn("g", "spinner", func(ctx context.Context) {
		a := ActorOf(ctx)
		for {
			a.SleepUntil(k.Now()) // never waits
		}
	})
	err := k.Run(time.Hour, nil)
	var ll *ErrLivelock
	require.ErrorAs(t, err, &ll)
	require.Equal(t, time.Duration(0), ll.At)
	require.Equal(t, uint64(1000), ll.Steps)
	k.Shutdown()

	// Time that moves resets the count.
	k = New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(false))
	k.livelockAfter = 1000
	k.Spawn("g", "ticker", func(ctx context.Context) {
		a := ActorOf(ctx)
		for {
			for range 500 {
				a.SleepUntil(k.Now())
			}
			a.SleepUntil(k.Now() + time.Millisecond)
		}
	})
	require.NoError(t, k.Run(time.Second, nil))
	k.Shutdown()
}
