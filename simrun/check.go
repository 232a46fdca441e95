package simrun

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/adaptercheck"
)

func newCheckCmd() *cobra.Command {
	var system string
	cmd := &cobra.Command{
		Use: "check",
		Short: "Check a system's adapter over a few small worlds and say what it gets wrong; exit 1 on an error, " +
			"0 with warnings only",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sys, err := lookupSystem(system)
			if err != nil {
				return usageErrorf("--system: %v", err)
			}
			rep := adaptercheck.Check(sys)
			fmt.Fprint(cmd.OutOrStdout(), rep.String())
			if rep.Failed() {
				return exitWith(exitSafety)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&system, "system", defaultSystem(), systemUsage())
	return cmd
}
