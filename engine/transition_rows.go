package engine

import (
	"fmt"
	"sort"
	"strings"
)

// transitionRows renders allowedTransitions as the transition script's
// lookup: a chain of branches on the current state that fills in that state's
// row alone (allowed[cur], terminal[cur]). A table of every row, built by a
// table constructor on every call (a script's locals do not outlive the
// call), cost more than the rest of the script; the branches' strings are
// constants, made once when the script is compiled.
func transitionRows() string {
	states := map[JobState]bool{}
	for from := range allowedTransitions {
		states[from] = true
	}
	for _, s := range AllStates {
		states[s] = true
	}
	names := make([]string, 0, len(states))
	for s := range states {
		names = append(names, string(s))
	}
	sort.Strings(names)
	var rows strings.Builder
	for _, name := range names {
		from := JobState(name)
		tos, terminal := allowedTransitions[from], from.Terminal()
		if len(tos) == 0 && !terminal {
			continue
		}
		if rows.Len() == 0 {
			fmt.Fprintf(&rows, "if cur == %q then", name)
		} else {
			fmt.Fprintf(&rows, "\nelseif cur == %q then", name)
		}
		if terminal {
			rows.WriteString(" terminal[cur] = true")
		}
		if len(tos) > 0 {
			rows.WriteString(" allowed[cur] = {")
			for i, to := range tos {
				if i > 0 {
					rows.WriteString(", ")
				}
				fmt.Fprintf(&rows, "[%q]=true", to)
			}
			rows.WriteString("}")
		}
	}
	rows.WriteString("\nend")
	return rows.String()
}
