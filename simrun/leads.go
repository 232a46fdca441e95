package simrun

import (
	"fmt"
	"io"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
)

// printNeverFiredLeads says, under a case whose declared fault kinds never
// fired, what each kind needs to fire and which spec field or adapter hook
// decides it: the lead a team follows, rather than the harness's source.
func printNeverFiredLeads(w io.Writer, c reports.CaseResult) {
	for _, name := range c.NeverFired {
		if k, ok := faults.Lookup(name); ok {
			fmt.Fprintf(w, "     %-44s %s fires at %s\n", reports.CaseName(c.CaseSpec), name, k.FiresAt())
		}
	}
}
