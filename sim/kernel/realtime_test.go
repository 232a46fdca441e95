package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// In live mode an actor waiting on a real server lets the others run: a
// ticker takes its turns while the call takes wall time. Killed meanwhile,
// the waiting actor still sees its call's result before it exits.
func TestAwaitOutsideLetsOthersRun(t *testing.T) {
	k := New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(true))
	k.UseRealTime()
	var ticks, ticksDuringCall int
	var returned, exited bool
	callDone := make(chan struct{})
	k.Spawn("ticker", "t", func(ctx context.Context) {
		a := ActorOf(ctx)
		for range 20 {
			ticks++
			a.SleepUntil(k.Now() + 10*time.Millisecond)
		}
	})
	waiter := k.Spawn("caller", "c", func(ctx context.Context) {
		a := ActorOf(ctx)
		defer func() { exited = true }()
		before := ticks
		a.AwaitOutside(func() {
			time.Sleep(120 * time.Millisecond)
			close(callDone)
		})
		select {
		case <-callDone:
		default:
			t.Error("the actor resumed before its call returned")
		}
		ticksDuringCall = ticks - before
		returned = true
		a.ExitIfDead()
		t.Error("a killed actor went on past ExitIfDead")
	})
	k.Spawn("killer", "k", func(ctx context.Context) {
		a := ActorOf(ctx)
		a.SleepUntil(k.Now() + 40*time.Millisecond)
		waiter.Kill()
		select {
		case <-callDone:
			t.Error("the call was over before the kill: the test shows nothing")
		default:
		}
	})
	require.NoError(t, k.Run(2*time.Second, func() bool { return exited && ticks == 20 }))
	k.Shutdown()
	require.True(t, returned, "the killed actor did not see its call's result")
	require.GreaterOrEqual(t, ticksDuringCall, 5, "the ticker hardly ran during a 120ms call")
}
