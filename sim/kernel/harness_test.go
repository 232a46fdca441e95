package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A panic in an actor the kernel runs ends the run with a HarnessFault that
// carries the value, the stack, the step and the trace up to it, instead of
// ending the process; the actors left are still shut down.
func TestAnActorsPanicInTheHarnessIsAHarnessFault(t *testing.T) {
	k := New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(true))
	k.Spawn("g", "ticker", func(ctx context.Context) {
		a := ActorOf(ctx)
		for {
			a.SleepUntil(k.Now() + time.Second)
		}
	})
	k.Spawn("g", "breaks", func(ctx context.Context) {
		a := ActorOf(ctx)
		a.SleepUntil(3 * time.Second)
		Breachf("the store answered a command it never received")
	})
	err := k.Run(time.Hour, nil)
	var f *HarnessFault
	require.ErrorAs(t, err, &f)
	require.Equal(t, "actor g/breaks", f.Where)
	require.Equal(t, "the store answered a command it never received", f.Value)
	require.Equal(t, 3*time.Second, f.Time)
	require.Equal(t, k.Step(), f.Step)
	require.Contains(t, f.Stack, "harness_test.go")
	require.True(t, strings.HasPrefix(f.Stack, "panic(...)\n"), "the stack starts at the panic:\n%s", f.Stack)
	require.NotContains(t, f.Stack, "goroutine ", "nothing that changes between runs")
	require.NotContains(t, f.Stack, "(0x")
	require.Contains(t, f.Tail, "actor=g/breaks run")
	require.Contains(t, err.Error(), "harness fault in actor g/breaks at step")
	require.ErrorIs(t, k.Run(2*time.Hour, nil), err, "the kernel stays failed")
	k.Shutdown()
}

// A panic on the controller (an alarm, as a store failover's snapshot runs)
// is carried to Run's caller the same way.
func TestAControllerPanicIsCarriedToTheRunsResult(t *testing.T) {
	k := New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(true))
	k.Spawn("g", "idle", func(ctx context.Context) { ActorOf(ctx).SleepUntil(time.Hour) })
	k.At(5*time.Second, func() {
		var snapshot map[string]int
		snapshot["key"]++ // a nil map: the harness's own bug
	})
	err := k.Run(time.Hour, nil)
	var f *HarnessFault
	require.ErrorAs(t, err, &f)
	require.Equal(t, "controller", f.Where)
	require.Equal(t, 5*time.Second, f.Time)
	require.Contains(t, f.Value, "assignment to entry in nil map")
	k.Shutdown()
}

// Whose a panic is: the first frame under runtime.gopanic outside the
// runtime and the standard library, the harness's packages against anything
// else; a SystemFailure is the system's wherever it was raised.
func TestAPanicIsTheHarnesssOnlyWhereTheHarnessRaisedIt(t *testing.T) {
	m := module
	require.Equal(t, "github.com/dispatchsim/dispatchsim", m)
	for _, c := range []struct {
		stack   []string
		harness bool
	}{
		{[]string{"runtime.gopanic", m + "/sim/store.(*Store).read", m + "/sim.(*World).Schedule.func1"}, true},
		{[]string{"runtime.gopanic", "runtime.panicmem", "runtime.sigpanic", m + "/engine.(*Scheduler).pick",
			m + "/sim/store.hook"}, false},
		{[]string{"runtime.gopanic", "runtime.goPanicIndex", m + "/systems/outbox.relay", m + "/sim/kernel.(*Actor).main"}, false},
		{[]string{"runtime.gopanic", "sort.Slice", "strings.Map", m + "/checker.checkPlacement"}, true},
		{[]string{"runtime.gopanic", "github.com/redis/go-redis/v9.(*baseClient).process", m + "/sim/store.hook"}, false},
		{[]string{"runtime.gopanic", m + "/third_party/miniredis/server.(*Peer).Flush"}, true},
		{[]string{"runtime.gopanic", "example.com/team/dispatcher.Handle"}, false},
		{[]string{"runtime.gopanic", m + "/sut.Routing.Eligible"}, false},
		{[]string{m + "/sim/kernel.(*Kernel).Recovered", "runtime.gopanic", m + "/sim/kernel.TestX"}, true},
		{[]string{m + "/sim.run"}, false}, // no panic on the stack
		// The baton assertion is its caller's: a system's Redis call on a
		// context not its actor's, or the harness's own client's.
		{[]string{"runtime.gopanic", m + "/sim/kernel.(*Kernel).Current", m + "/sim/store.hook.ProcessHook.func1",
			"github.com/redis/go-redis/v9.(*Client).Get", m + "/engine.(*Scheduler).handle", m + "/sim/kernel.(*Actor).main"}, false},
		{[]string{"runtime.gopanic", m + "/sim/kernel.(*Kernel).Current", m + "/sim/store.hook.ProcessHook.func1",
			"github.com/redis/go-redis/v9.(*Client).Get", m + "/sim/traffic.(*Clients).read", m + "/sim/kernel.(*Actor).main"}, true},
	} {
		require.Equal(t, c.harness, raisedIn(c.stack), strings.Join(c.stack, " <- "))
	}

	k := New(SeedTree{Root: 1}.Child("scheduler"), NewTrace(false))
	k.At(time.Second, func() { panic(SystemFailure("replica-1 could not start: bad options")) })
	err := k.Run(time.Hour, nil)
	var sp *SystemPanic
	require.ErrorAs(t, err, &sp)
	require.Contains(t, err.Error(), "sim: controller panicked: replica-1 could not start: bad options")
	var f *HarnessFault
	require.False(t, errors.As(err, &f))
	k.Shutdown()
}
