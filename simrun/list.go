package simrun

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
)

func newListCmd() *cobra.Command {
	var system string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List systems, suites (with the seeds each plans for --system) and scenarios, with the fault kinds each uses",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sys, err := lookupSystem(system)
			if err != nil {
				return usageErrorf("--system: %v", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "SYSTEMS (--system; the first is the default)")
			for _, name := range systems.order {
				fmt.Fprintf(out, "  %s: %s\n", name, describeSystem(systems.byName[name].Spec(sut.Options{})))
			}
			fmt.Fprintln(out)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "SUITE\tSEEDS FOR %s\tDESCRIPTION\n", strings.ToUpper(sys.Name()))
			for _, s := range scenarios.Suites() {
				seeds, na := suiteSeeds(s, sys)
				what := fmt.Sprint(seeds)
				if na > 0 {
					what += fmt.Sprintf(" (%d cases n/a)", na)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, what, s.Description)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nSCENARIOS (in %s's state names)\n", sys.Name())
			for _, sc := range scenarios.All() {
				kinds := "drawn per seed (swarm)"
				if !sc.Swarm {
					names := make([]string, len(sc.Faults))
					for i, k := range sc.Faults {
						names[i] = k.Name
					}
					kinds = strings.Join(names, ", ")
				}
				fmt.Fprintf(out, "%s  [%s, seeds %d..%d]\n    %s\n    faults: %s\n", sc.Name, sc.Source, sc.Seeds.First,
					sc.Seeds.First+uint64(sc.Seeds.Count)-1, sc.On(sys).Describe(), kinds)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&system, "system", defaultSystem(), "count the seeds each suite plans for this "+systemUsage())
	return cmd
}

// describeSystem says what a system declares it has, from its spec.
func describeSystem(s sut.Spec) string {
	var has, lacks []string
	for _, f := range []scenarios.Feature{scenarios.FeatureJobLock, scenarios.FeatureRunning, scenarios.FeatureRollback,
		scenarios.FeatureReplicaCancels, scenarios.FeatureTenantCaps, scenarios.FeatureInvalidRequest,
		scenarios.FeatureRunAdmission, scenarios.FeaturePickGrace, scenarios.FeatureRouteAwaited} {
		if f.In(s) {
			has = append(has, string(f))
		} else {
			lacks = append(lacks, string(f))
		}
	}
	out := fmt.Sprintf("%d states, promises %s", len(s.States), s.Delivery)
	if s.Clocks == sut.ReplicaClocks {
		out += ", measures on replica clocks (timing checks excuse their spread)"
	}
	if len(has) > 0 {
		out += "; has " + strings.Join(has, ", ")
	}
	if len(lacks) > 0 {
		out += "; lacks " + strings.Join(lacks, ", ")
	}
	return out
}

// suiteSeeds counts the seeds simrun run --suite plans for sys (the cases
// fitted to it, as the gate fits them) and the cases that do not apply.
func suiteSeeds(s scenarios.Suite, sys sut.System) (seeds, notApplicable int) {
	sel, fit := fitSelection(selection{Name: s.Name, Cases: s.Cases, Custom: make([]bool, len(s.Cases))}, sys)
	whole, _ := parseShard("")
	return len(sel.tasks(whole)), len(fit.notApplicable)
}
