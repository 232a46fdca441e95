package simrun

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// derivedOptions lists everything a seed decided or a scenario set: what an
// engineer needs to read a failure without opening the code.
func derivedOptions(sc scenarios.Scenario, o *scenarios.Outcome) []reports.Option {
	out := configOptions(sc, o.World.Config(), o.Seed)
	return append(out, reports.Option{Name: "faults fired",
		Value: fmt.Sprintf("%d (plan of %d entries)", len(o.Run.History.Faults), len(o.Plan.Entries))})
}

// configOptions lists a seed's world configuration (defaults filled in, the
// values the run uses) and its fault options.
func configOptions(sc scenarios.Scenario, cfg sim.Config, seed uint64) []reports.Option {
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
		opt("seed", "%d (0x%x)", seed, seed),
		opt("system", "%s", cfg.System.Name()),
		opt("system options", "%s", cfg.Options),
		opt("replicas", "%d", cfg.Replicas),
		opt("workers", "%s", strings.Join(workers, " ")),
		opt("broker", "dedup=%t window=%s ack_wait=%s max_deliver=%d max_ack_pending=%d", cfg.Bus.Dedup, cfg.Bus.DedupWindow,
			cfg.Bus.AckWait, cfg.Bus.MaxDeliver, cfg.Bus.MaxAckPending),
		opt("broker streams", "%s", cfg.Bus.Topology()),
		opt("job duration", "%s-%s", cfg.Workers.JobDurationMin, cfg.Workers.JobDurationMax),
		opt("worker dedup", "%t", !cfg.Workers.NoDedup),
		opt("workload", "jobs=%d status_reads=%d cancel_rate=%.2f topics=%s requires=%v", wl.Jobs, wl.StatusReads, wl.CancelRate,
			strings.Join(wl.Topics, ","), wl.Requires),
		opt("phases", "fault=%s heal_bound=%s drain=%s", cfg.FaultPhase, cfg.HealBound, cfg.Drain),
	}
	if v := sc.Variant(); !v.IsZero() {
		how := "as asked"
		if v.StrategySwarm {
			how = "drawn from the seed"
		}
		out = append(out, opt("scheduler", "%s (%s)", cfg.Scheduling, how))
		if !cfg.Branch.IsZero() {
			focus := ""
			if cfg.Branch.Focus != "" {
				focus = fmt.Sprintf(", favouring job %s's fault points", cfg.Branch.Focus)
			}
			out = append(out, opt("branch", "%s: the seed to step %d, then every stream reseeded for branch %d "+
				"(faults after it drawn from the branch's streams%s)", cfg.Branch, cfg.Branch.Step, cfg.Branch.N, focus))
		}
	}
	if wl.Tenants > 0 || wl.InvalidRate > 0 {
		// Their caps are the system's options (tenant_max_active).
		out = append(out, opt("requests", "tenants=%d invalid_rate=%.2f", wl.Tenants, wl.InvalidRate))
	}
	if wl.Runs > 0 {
		out = append(out, opt("workflow runs", "runs=%d keys=%d limit=%d duration=%s orgs=%d (%d unlimited) workflows=%d "+
			"reuse=%.2f invalid=%d without_key=%d foreign_keys=%d", wl.Runs, wl.RunKeys, wl.RunLimit,
			max(wl.RunDuration, 30*time.Second), wl.RunOrgs, wl.RunUnlimitedOrgs, wl.RunWorkflows, wl.RunReuse, wl.RunInvalid,
			wl.RunsWithoutKey, wl.RunForeignKeys))
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
	for _, n := range slices.Sorted(maps.Keys(cfg.ReplicaOptions)) {
		out = append(out, opt(fmt.Sprintf("replica-%d options", n), "%s", cfg.ReplicaOptions[n]))
	}
	if len(cfg.Events) > 0 {
		events := make([]string, len(cfg.Events))
		for i, e := range cfg.Events {
			events[i] = e.String()
		}
		out = append(out, opt("events", "%s", strings.Join(events, "; ")))
	}
	fo := sc.FaultOptions(seed)
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
		opt("fault budget", "%s", budget))
	return out
}

// printSeedOptions prints each task's options, derived from the configuration
// the seed's run will use.
func printSeedOptions(w io.Writer, tasks []task, sys sut.System) {
	for _, t := range tasks {
		sc, ok := scenarios.Lookup(t.Scenario)
		if !ok {
			continue
		}
		v, _ := parseVariant(t.Branch, t.Strategy)
		sc = sc.On(sys).With(v)
		fmt.Fprintf(w, "seed %s/%d:\n", sc.Name, t.Seed)
		for _, opt := range configOptions(sc, sc.SeedConfig(t.Seed), t.Seed) {
			fmt.Fprintf(w, "  %-15s %s\n", opt.Name+":", opt.Value)
		}
	}
}
