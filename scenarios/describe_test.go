package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// A description reads in the system's own state names: every role at once
// (one state holding two roles, a role the system lacks), whole words only.
func TestDescriptionsReadInTheSystemsStateNames(t *testing.T) {
	from := sut.Spec{Scheduled: "SCHED", Dispatched: "SENT", Running: "RUN", Succeeded: "OK"}
	to := sut.Spec{Scheduled: "CLAIMED", Dispatched: "CLAIMED", Running: "", Succeeded: "DONE"}
	require.Equal(t, "CLAIMED to CLAIMED and (no Running state) writes fail; DONE, not OKAY; SENTINEL stays",
		inNamesOf("SCHED to SENT and RUN writes fail; OK, not OKAY; SENTINEL stays", from, to))

	sc, _ := Lookup("dispatch-rollback")
	require.Equal(t, sc.Description, sc.On(cordum.System{}).Describe(), "written in the bundled engine's names")
	engine := cordum.System{}.Spec(sut.Options{})
	queue := respec{System: cordum.System{}, name: "queue", edit: func(s *sut.Spec) {
		s.Dispatched, s.Running = "CLAIMED", ""
	}}
	got := sc.On(queue).Describe()
	require.NotContains(t, got, engine.Dispatched)
	require.Contains(t, got, "CLAIMED")
	require.Contains(t, got, "(no Running state)")
}

// A client's late retry comes inside the submit de-duplication window the
// spec promises, however late its draw: a retry past it would hold the
// system to a promise it never made.
func TestLateSubmitRetriesComeInsideTheWindow(t *testing.T) {
	const window = 20 * time.Second
	sys := respec{System: cordum.System{}, name: "short-window", edit: func(s *sut.Spec) { s.SubmitDedupWindow = window }}
	sc, _ := Lookup("submit-retries")
	late := 0
	for _, seed := range []uint64{9300, 9301} {
		o := sc.On(sys).Run(seed)
		for _, job := range o.Run.History.Submitted {
			if len(job.Attempts) < 2 {
				continue
			}
			span := job.Attempts[len(job.Attempts)-1] - job.Attempts[0]
			require.LessOrEqual(t, span, window+10*time.Second, "job %s seed %d: %v", job.JobID, seed, job.Attempts)
			if span > 10*time.Second {
				late++
			}
		}
	}
	require.Positive(t, late, "no late retry was sent")
}
