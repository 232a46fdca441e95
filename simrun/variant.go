package simrun

import (
	"fmt"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// strategyUsage and branchUsage are the help of --strategy and --branch.
const (
	strategyUsage = "scheduling strategy: uniform (default), pct (depth 3), pct:D (depth D, 1-10), " +
		"or swarm (drawn from each seed as world data)"
	branchUsage = "continue the seed from step K as branch B (K/B, or K/B@job to favour that job's fault points): every stream reseeded at step K"
)

// parseVariant reads --branch and --strategy ("" for each: the seed itself).
func parseVariant(branch, strategy string) (scenarios.Variant, error) {
	var v scenarios.Variant
	if branch != "" {
		b, err := sim.ParseBranch(branch)
		if err != nil {
			return v, fmt.Errorf("--branch: %v", err)
		}
		v.Branch = b
	}
	switch strategy {
	case "", "uniform":
	case "swarm":
		v.StrategySwarm = true
	default:
		s, err := sim.ParseScheduling(strategy)
		if err != nil {
			return v, fmt.Errorf("--strategy: %v (or swarm)", err)
		}
		v.Strategy = s
	}
	return v, nil
}

// variantOf is the variant a recorded seed ran (a record this build wrote).
func variantOf(r reports.SeedResult) scenarios.Variant {
	v, _ := parseVariant(r.Branch, r.Strategy)
	return v
}

// sameVariant reports whether a recorded seed ran variant v.
func sameVariant(r reports.SeedResult, v scenarios.Variant) bool {
	return r.Branch == v.Branch.String() && r.Strategy == v.StrategyFlag()
}

// orSeed is a branch key to print, "0/0" for the seed itself.
func orSeed(branch string) string {
	if branch == "" {
		return "0/0"
	}
	return branch
}
