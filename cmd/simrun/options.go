package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
)

// derivedOptions lists everything a seed decided or a scenario set: what an
// engineer needs to read a failure without opening the code.
func derivedOptions(sc scenarios.Scenario, o *scenarios.Outcome) []reports.Option {
	cfg := o.World.Config()
	wl := cfg.Workload
	opt := func(name, format string, args ...any) reports.Option {
		return reports.Option{Name: name, Value: fmt.Sprintf(format, args...)}
	}
	workers := make([]string, len(cfg.WorkerSpecs))
	for i, w := range cfg.WorkerSpecs {
		workers[i] = fmt.Sprintf("%s(%s,%d)", w.ID, w.Pool, w.MaxParallel)
	}
	out := []reports.Option{
		opt("scenario", "%s (%s)", sc.Name, sc.Source),
		opt("seed", "%d (0x%x)", o.Seed, o.Seed),
		opt("replicas", "%d", cfg.Replicas),
		opt("workers", "%s", strings.Join(workers, " ")),
		opt("broker dedup", "%t", cfg.Bus.Dedup),
		opt("worker dedup", "%t", !cfg.Workers.NoDedup),
		opt("workload", "jobs=%d status_reads=%d cancel_rate=%.2f topics=%s", wl.Jobs, wl.StatusReads, wl.CancelRate,
			strings.Join(wl.Topics, ",")),
		opt("phases", "fault=%s heal_bound=%s drain=%s", cfg.FaultPhase, cfg.HealBound, cfg.Drain),
	}
	if wl.Runs > 0 {
		out = append(out, opt("workflow runs", "runs=%d keys=%d limit=%d", wl.Runs, wl.RunKeys, wl.RunLimit))
	}
	var skews []string
	for i, d := range cfg.ReplicaSkew {
		if d != 0 {
			skews = append(skews, fmt.Sprintf("replica-%d:%s", i+1, d))
		}
	}
	if len(skews) > 0 {
		out = append(out, opt("clock skew", "%s", strings.Join(skews, " ")))
	}
	fo := sc.FaultOptions(o.Seed)
	names := make([]string, 0, len(fo.Kinds))
	for name := range fo.Kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	kinds := make([]string, len(names))
	for i, name := range names {
		ko := fo.Kinds[name]
		kinds[i] = name
		if ko.Probability > 0 {
			kinds[i] += fmt.Sprintf("(p=%g)", ko.Probability)
		}
	}
	if sc.Swarm {
		out = append(out, opt("swarm", "kinds drawn from the seed"))
	}
	budget := "defaults"
	if fo.Budget != (faults.Budget{}) {
		budget = fmt.Sprintf("%+v", fo.Budget)
	}
	out = append(out, opt("fault kinds", "%s", strings.Join(kinds, " ")),
		opt("fault budget", "%s", budget),
		opt("faults fired", "%d (plan of %d entries)", len(o.Run.History.Faults), len(o.Plan.Entries)))
	return out
}
