package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// A rolling deploy as events: replica-1 stops with a drain and starts again;
// replica-2 is killed and stays down past the crash restart delay until its
// start. Every job still ends, and the trace says when each happened.
func TestEventsStopDrainKillAndStartReplicas(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 3, KeepTrace: true, Events: []Event{
		{At: 10 * time.Second, Action: EventStop, Replica: 1, For: 30 * time.Second},
		{At: 60 * time.Second, Action: EventStart, Replica: 1},
		{At: 20 * time.Second, Action: EventKill, Replica: 2},
		{At: 100 * time.Second, Action: EventStart, Replica: 2},
		{At: 30 * time.Second, Action: EventPause, Replica: 3, For: 5 * time.Second},
	}})
	res := w.Run()
	require.NoError(t, res.Err)
	trace := string(w.Trace().Bytes())
	for _, want := range []string{
		"t=10.000s actor=replica-1 replica stopping: no more deliveries, 30s to drain",
		"actor=replica-1 replica stopped",
		"t=60.000s actor=replica-1 replica started",
		"t=20.000s actor=replica-2 event kill replica-2 at 20s",
		"t=100.000s actor=replica-2 replica started",
		"t=30.000s actor=replica-3 replica paused for 5s",
	} {
		require.Contains(t, trace, want)
	}
	require.NotContains(t, trace, "actor=replica-2 replica restarted", "a killed replica waits for its start")
	for _, job := range res.Final {
		require.True(t, w.Spec().IsTerminal(job.State), "%+v\n%s", job, kernel.Tail(w.Trace().Bytes(), 30))
	}
	events, drainEnd := 0, 0
	for _, f := range res.History.Faults {
		if strings.HasPrefix(f.Kind, "Event:") {
			events++
		}
		if f.Kind == "Event:stop" && f.Effect == EffectCrash {
			drainEnd++
			require.Equal(t, "replica-1", f.Actor)
			require.GreaterOrEqual(t, f.Time, 10*time.Second)
		}
	}
	// World-swarm 708715: a handler still running when the drain ran out
	// wrote a DLQ entry and died before announcing it; the history must say
	// its process went down then, not only when the stop began.
	require.Equal(t, 1, drainEnd, "the drain's end takes the replica down, as a crash of what still ran")
	require.Equal(t, 6, events, "every event is in the history, and the drain's end")
}

func TestEventsAreValidated(t *testing.T) {
	w := NewWorld(Config{System: cordum.System{}, Seed: 1})
	t.Cleanup(w.Drive().Abort)
	for _, e := range []Event{
		{At: time.Second, Action: EventStop, Replica: 4},
		{At: time.Second, Action: EventStart, Replica: 0},
		{At: time.Second, Action: "reboot", Replica: 1},
		{At: time.Second, Action: EventPause, Replica: 1},
		{At: time.Second, Action: EventStoreLoss, For: 2 * time.Second},
		{At: time.Second, Action: EventStoreLoss},
	} {
		require.Error(t, w.Schedule(e), "%s", e)
	}
	require.NoError(t, w.Schedule(Event{At: 2 * time.Second, Action: EventStoreLoss, For: time.Second}))
}
