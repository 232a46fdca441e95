package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Start runs the relay, reconciler and replayer on the clock's timers only;
// stop ends them.
func TestStartTicksThroughTheClock(t *testing.T) {
	env := newTestEnv(t)
	r := env.replica(t)
	stop := r.Start()
	r.submit(t, "j1")
	require.Empty(t, env.bus.to("worker."), "nothing runs until the clock says so")

	env.clock.Advance(DefaultRelayInterval)
	require.Len(t, env.bus.to("worker."), 1)
	require.Equal(t, StateRunning, r.state(t, "j1"))

	env.clock.Advance(DefaultRunningTimeout + DefaultReconcileInterval)
	require.Equal(t, StateTimeout, r.state(t, "j1"), "the reconciler ticked")
	require.Len(t, env.bus.to(SubjectDLQ), 1, "and the relay announced the DLQ entry")

	stop()
	r.heartbeat(t)
	r.submit(t, "j2")
	env.clock.Advance(time.Hour)
	require.Empty(t, env.bus.to(WorkerSubject("w1"))[1:], "no tick after stop")
	require.Equal(t, StateDispatched, r.state(t, "j2"))
}
