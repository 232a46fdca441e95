package scenarios

import (
	"regexp"
	"strings"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// Describe is the scenario's description in its system's own state names:
// the descriptions are written in the bundled engine's, and each state
// they name is a role of its spec, which names another state, or none, in
// the system's.
func (s Scenario) Describe() string {
	return inNamesOf(s.Description, cordum.System{}.Spec(sut.Options{}), s.system().Spec(sut.Options{}))
}

// inNamesOf rewrites the state names of spec from in text into those of
// spec to, role by role, all at once; a role to lacks reads as its absence.
func inNamesOf(text string, from, to sut.Spec) string {
	roles := []struct{ role, from, to string }{
		{"Scheduled", from.Scheduled, to.Scheduled}, {"Dispatched", from.Dispatched, to.Dispatched},
		{"Running", from.Running, to.Running}, {"Retrying", from.Retrying, to.Retrying},
		{"Succeeded", from.Succeeded, to.Succeeded}, {"Failed", from.Failed, to.Failed},
		{"Cancelled", from.Cancelled, to.Cancelled}, {"TimedOut", from.TimedOut, to.TimedOut},
	}
	swap := map[string]string{}
	var names []string
	for _, r := range roles {
		if r.from == "" || r.from == r.to {
			continue
		}
		if _, seen := swap[r.from]; seen {
			continue
		}
		swap[r.from] = r.to
		if r.to == "" {
			swap[r.from] = "(no " + r.role + " state)"
		}
		names = append(names, regexp.QuoteMeta(r.from))
	}
	if len(names) == 0 {
		return text
	}
	re := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	return re.ReplaceAllStringFunc(text, func(name string) string { return swap[name] })
}
