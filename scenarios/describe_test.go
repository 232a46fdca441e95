package scenarios

import (
	"testing"

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
