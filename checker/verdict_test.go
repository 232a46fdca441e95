package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
)

// A zero LinearizabilityTimeout means the documented 5s, never no time at
// all (which would leave every partition unknown).
func TestLinearizabilityTimeoutDefaultsToFiveSeconds(t *testing.T) {
	require.Equal(t, 5*time.Second, Spec{}.withDefaults(cordumSpec).LinearizabilityTimeout)
	require.Equal(t, time.Second, Spec{LinearizabilityTimeout: time.Second}.withDefaults(cordumSpec).LinearizabilityTimeout)
}

// The environment breaking its own contract fails the run but not the
// system; linearizability not shown fails both.
func TestSystemFailedLeavesOutTheEnvironment(t *testing.T) {
	env := &Result{Linearizability: LinOk, Violations: []Violation{{Layer: LayerEnvironment, Checker: "no_resurrection"}}}
	require.True(t, env.Failed())
	require.False(t, env.SystemFailed())

	unknown := &Result{Linearizability: LinUnknown}
	require.True(t, unknown.SystemFailed(), "an unknown linearization is never a pass")
}

// Violations come layer by layer (safety before liveness), by step within a
// layer, whatever order the checkers found them in.
func TestViolationsAreListedLayerByLayer(t *testing.T) {
	s := newStory().submit("j1").commit("j1", engine.StatePending).commit("j1", engine.StateScheduled).
		commit("j1", engine.StateDispatched)
	s.step += 400 // j1 waits DISPATCHED past its timeout: a liveness finding, early in the run
	s.commit("j1", engine.StateTimeout)
	s.dead("j1", dlqEntry(engine.StateTimeout, engine.StateDispatched, engine.ReasonDispatchTimeout))
	s.dispatch("j2").publish("j2", 0, history.PublishStored) // a second copy: a safety finding, later
	r := s.check()
	require.Equal(t, []string{"exactly_once_publish", "terminal_job_executed_again", "dispatch_timeout"}, checkers(r))
	require.Equal(t, []Layer{LayerInvariants, LayerInvariants, LayerLiveness},
		[]Layer{r.Violations[0].Layer, r.Violations[1].Layer, r.Violations[2].Layer})
	require.Less(t, r.Violations[2].Step, r.Violations[0].Step, "the liveness finding is the earlier one")
	require.Equal(t, LayerInvariants, r.FirstFailedLayer())
}

// A violation names the faults that touched its job up to and including its
// own step (a fault fires at the step it breaks); with none of its own, the
// last three of the run before it.
func TestViolationNamesItsJobsFaultsOrTheLastThree(t *testing.T) {
	s := newStory().dispatch("j1")
	s.publish("j1", 0, history.PublishStored)
	at := s.h.Publishes[len(s.h.Publishes)-1].Step
	s.h.Faults = []history.FaultRecord{{Step: 2, Target: "sys.job.result j2"}, {Step: 3, Target: "sys.job.result j2"},
		{Step: 4, Target: "sys.job.result j2"}, {Step: 5, Target: "sys.job.result j2"},
		{Step: at, Kind: "DeliveryDuplicated", Target: "worker.w1.jobs j1"}}
	r := s.check()
	require.Equal(t, "exactly_once_publish", r.Violations[0].Checker)
	require.Equal(t, []uint64{at}, r.Violations[0].FaultSteps)

	s.h.Faults = s.h.Faults[:4]
	r = s.check()
	require.Equal(t, []uint64{3, 4, 5}, r.Violations[0].FaultSteps)
}
