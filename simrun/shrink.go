package simrun

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
)

func newShrinkCmd() *cobra.Command {
	var system, scenario, seed, out, branch, strategy string
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "shrink",
		Short: "Minimize a failing seed's fault plan to the smallest that still fails the same checker",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := parseVariant(branch, strategy)
			if err != nil {
				return usageErrorf("%v", err)
			}
			t, err := resolveTarget(system, scenario, seed, "", v)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if budget <= 0 {
				return usageErrorf("--budget %s: want a positive duration", budget)
			}
			if err := ensureWritableDir(out); err != nil {
				return usageErrorf("--out %s: %v", out, err)
			}
			return shrink(cmd.OutOrStdout(), t, out, budget)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&system, "system", defaultSystem(), systemUsage())
	fl.StringVar(&scenario, "scenario", "", "scenario of the failing seed")
	fl.StringVar(&seed, "seed", "", "the failing seed")
	fl.StringVar(&branch, "branch", "", branchUsage)
	fl.StringVar(&strategy, "strategy", "", strategyUsage)
	fl.StringVar(&out, "out", "simrun-out", "where the original and the minimal failure's artifacts go")
	fl.DurationVar(&budget, "budget", 5*time.Minute, "stop shrinking after this long and keep the smallest plan so far")
	return cmd
}

// shrink writes the failure's artifacts, then delta-debugs its fault plan:
// a candidate plan is kept when the seed, forced to exactly those faults,
// still fails with the same checker.
func shrink(w io.Writer, t seedTarget, out string, budget time.Duration) error {
	o := t.sc.RunTraced(t.seed, nil)
	res := reports.SeedResultOf(reportRun(o), t.sc.ExpectViolation)
	if passed(res) {
		fmt.Fprintf(w, "%s seed %d passes (%s): nothing to shrink\n", t.sc.Name, t.seed, res.Verdict)
		return nil
	}
	target := primaryChecker(res)
	dir := filepath.Join(out, artifactDir(t.sc.Name, t.seed, t.sc.Variant()))
	res.Artifacts = dir
	res.Replay = replayFrom(dir)
	if err := writeArtifacts(dir, t.sc, o, res, reports.Meta{Replay: res.Replay}); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	fmt.Fprintf(w, "%s seed %d%s fails %s with %d faults; original artifacts in %s\n",
		t.sc.Name, t.seed, t.sc.Variant().Flags(), target, len(o.Plan.Entries), dir)

	deadline := time.Now().Add(budget) // determinism-ok: a wall-clock budget on the CLI
	runs := 0
	fails := func(p faults.Plan) bool {
		runs++
		c := t.sc.RunPlan(t.seed, p)
		return failsWith(reports.SeedResultOf(reportRun(c), t.sc.ExpectViolation), target)
	}
	if !fails(o.Plan) {
		return &exitError{code: exitNondeterministic,
			err: fmt.Errorf("%s seed %d: forcing its own recorded plan does not fail %s again", t.sc.Name, t.seed, target)}
	}
	minimal, complete := ddmin(o.Plan, fails, func() bool { return time.Now().After(deadline) }) // determinism-ok: budget
	planFile := filepath.Join(dir, "plan.min.json")
	if err := reports.WriteFileAtomic(planFile, func(w io.Writer) error { return writePlan(w, minimal) }); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	m := t.sc.RunTraced(t.seed, &minimal)
	mres := reports.SeedResultOf(reportRun(m), t.sc.ExpectViolation)
	mdir := filepath.Join(dir, "min")
	mres.Artifacts = mdir
	// min/ records the forced plan and its checksum: --from replays exactly it.
	replayLine := replayFrom(mdir)
	mres.Replay = replayLine
	meta := reports.Meta{Plan: &minimal, Replay: replayLine,
		Note: fmt.Sprintf("fault plan shrunk from %d to %d entries (%d runs)", len(o.Plan.Entries), len(minimal.Entries), runs)}
	if err := writeArtifacts(mdir, t.sc, m, mres, meta); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	state := "minimal: removing any one fault makes it pass"
	switch {
	case !complete:
		state = "the budget ran out; smaller may exist"
	case len(minimal.Entries) == 0:
		state = "no fault needed: the workload alone fails it"
	}
	fmt.Fprintf(w, "shrunk to %d of %d faults in %d runs (%s)\n", len(minimal.Entries), len(o.Plan.Entries), runs, state)
	for _, e := range minimal.Entries {
		fmt.Fprintf(w, "  %s\n", e)
	}
	fmt.Fprintf(w, "report: %s\nreplay: %s\n", filepath.Join(mdir, "report.html"), replayLine)
	return exitWith(verdictCode(res.Verdict))
}

// primaryChecker is what a shrunk plan must still break: the first
// violation's checker, or the linearizability verdict when no checker fired.
func primaryChecker(r reports.SeedResult) string {
	if len(r.Violations) > 0 {
		return r.Violations[0].Checker
	}
	return "linearizability:" + r.Linearizability
}

func failsWith(r reports.SeedResult, target string) bool {
	if target == "linearizability:"+r.Linearizability {
		return true
	}
	for _, v := range r.Violations {
		if v.Checker == target {
			return true
		}
	}
	return false
}

// ddmin is Zeller's delta debugging over plan entries: try each chunk alone,
// then each complement, refining the granularity, until removing any single
// entry stops the failure (complete) or out says stop.
func ddmin(p faults.Plan, fails func(faults.Plan) bool, out func() bool) (faults.Plan, bool) {
	n := 2
	for len(p.Entries) >= 2 {
		if out() {
			return p, false
		}
		chunks := faults.Chunks(p, n)
		reduced := false
		for _, c := range chunks {
			if cand := faults.Subset(p, c); fails(cand) {
				p, n, reduced = cand, 2, true
				break
			}
			if out() {
				return p, false
			}
		}
		if !reduced && n > 2 {
			for _, c := range chunks {
				if cand := faults.Subset(p, complement(len(p.Entries), c)); fails(cand) {
					p, n, reduced = cand, max(n-1, 2), true
					break
				}
				if out() {
					return p, false
				}
			}
		}
		if !reduced {
			if n >= len(p.Entries) {
				break
			}
			n = min(2*n, len(p.Entries))
		}
	}
	if len(p.Entries) == 1 && !out() {
		if empty := faults.Subset(p, nil); fails(empty) {
			return empty, true
		}
	}
	return p, true
}

func complement(n int, remove []int) []int {
	drop := make(map[int]bool, len(remove))
	for _, i := range remove {
		drop[i] = true
	}
	var keep []int
	for i := range n {
		if !drop[i] {
			keep = append(keep, i)
		}
	}
	return keep
}
