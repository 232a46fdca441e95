package simrun

import (
	"fmt"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
)

// replaySeed is the line that replays a seed by its scenario and number,
// and its branch and strategy.
func replaySeed(system, scenario string, seed uint64, v scenarios.Variant) string {
	return fmt.Sprintf("%s replay%s --scenario %s --seed %d%s", progName, systemFlag(system), scenario, seed, v.Flags())
}

// reportRun is an outcome as reports read it.
func reportRun(o *scenarios.Outcome) reports.Run {
	r := reports.Run{System: o.System, Scenario: o.Scenario, Seed: o.Seed, Checksum: o.Checksum, Steps: o.Steps,
		Result: o.Result, Plan: o.Plan, Fired: o.Fired, Branches: o.Branches, Wall: o.Wall, Check: o.Check,
		Replay: replaySeed(o.System, o.Scenario, o.Seed, o.Variant), Branch: o.Variant.Branch.String(),
		Strategy: o.Variant.StrategyFlag()}
	if o.Run != nil {
		r.History = o.Run.History
	}
	if o.World != nil {
		r.Trace = o.World.Trace().Bytes()
		spec := o.World.Spec()
		r.Spec = &spec
	}
	return r
}
