package simrun

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// exploreFirstSeed and exploreSeedsPerDay place a night's seeds: each UTC
// day gets its own range, far from every fixed range, so a nightly run never
// repeats a seed an earlier night ran.
const (
	exploreFirstSeed   = 1_000_000_000
	exploreSeedsPerDay = 100_000
)

// exploreFlags are the flags of simrun explore.
type exploreFlags struct {
	budget       time.Duration
	from         string
	date         string
	count        int
	shard        string
	jobs         int
	shrinkBudget time.Duration
	known        string
	out          string
	branches     int
	strategy     string
	until        string
	scenario     string
	system       string
}

func newExploreCmd() *cobra.Command {
	var f exploreFlags
	cmd := &cobra.Command{
		Use: "explore",
		Short: "Run fresh seeds of the swarm (or --scenario) until a budget, bucket the failures by signature, shrink one per bucket and " +
			"write findings.json (and summary.json for report merge); exit 1 when a new finding turns up",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return exploreCmd(cmd, f) },
	}
	fl := cmd.Flags()
	fl.DurationVar(&f.budget, "budget", 0, "stop starting seeds after this long (required)")
	fl.StringVar(&f.from, "from", "", fmt.Sprintf("first seed (default: from the UTC date, %d + %d per day since 1970)",
		exploreFirstSeed, exploreSeedsPerDay))
	fl.StringVar(&f.date, "date", "", "UTC date YYYY-MM-DD the seed range derives from (default today)")
	fl.IntVar(&f.count, "count", exploreSeedsPerDay, "seeds planned from the first (the budget usually stops sooner)")
	fl.StringVar(&f.shard, "shard", "", "run only shard I of N (I/N, 1-based) of the planned seeds")
	fl.IntVarP(&f.jobs, "jobs", "j", 2, "seeds run in parallel, one worker process each")
	fl.DurationVar(&f.shrinkBudget, "shrink-budget", 2*time.Minute, "shrinking budget per bucket representative "+
		"(0: no shrinking; the representative keeps its whole plan)")
	fl.StringVar(&f.known, "known", "", "an earlier findings.json: its buckets are not new")
	fl.StringVar(&f.out, "out", "simrun-explore", "directory for findings.json, summary.json, index.html and artifacts")
	fl.IntVar(&f.branches, "branch", 0, "when a seed is the first to reach a moment (a fault in a job state, a state "+
		"transition), continue it from that step as N branches with fresh randomness (0: no branching)")
	fl.StringVar(&f.strategy, "strategy", "", strategyUsage)
	fl.StringVar(&f.scenario, "scenario", "swarm", "scenario whose fresh seeds to run: swarm, sparse-swarm (point "+
		"faults as rare as production's), world-swarm, or any other")
	fl.StringVar(&f.system, "system", defaultSystem(), systemUsage())
	fl.StringVar(&f.until, "until", "", "comma-separated checkers, or any: stop starting runs once a run fails with one "+
		"of them (a hunt for one defect ends at its first kill)")
	return cmd
}

// Finding is one bucket of failures with the same signature.
type Finding struct {
	Signature string   `json:"signature"` // scenario / checker / the shrunk plan's fault kinds
	Scenario  string   `json:"scenario"`
	Checker   string   `json:"checker"`
	Kinds     []string `json:"kinds"` // fault kinds of the shrunk plan, sorted
	Seeds     []uint64 `json:"seeds"`
	// Seed is the shrunk representative; Plan its minimal fault plan.
	// Branch and Strategy complete its replay key.
	Seed     uint64   `json:"seed"`
	Branch   string   `json:"branch,omitempty"`
	Strategy string   `json:"strategy,omitempty"`
	Plan     []string `json:"plan"`
	Complete bool     `json:"shrink_complete"`
	Replay   string   `json:"replay"`
	// RunsToFirst counts the runs (seeds and branches, in the order the
	// campaign took them) up to and including the bucket's first failure;
	// SecondsToFirst sums their run times: the cost of finding it.
	RunsToFirst    int     `json:"runs_to_first"`
	SecondsToFirst float64 `json:"run_seconds_to_first"`
	// New is false for a bucket a pinned regression seed or --known already has.
	New     bool   `json:"new"`
	KnownAs string `json:"known_as,omitempty"`
}

// Findings is what a night's run leaves for the next one and for people.
type Findings struct {
	Tool       string             `json:"tool"`
	Provenance reports.Provenance `json:"provenance"`
	Date       string             `json:"date"`
	From       uint64             `json:"from"`
	Shard      string             `json:"shard,omitempty"`
	SeedsRun   int                `json:"seeds_run"`
	// BranchesRun are the branches run from Discoveries, the moments a
	// seed reached first (explore --branch).
	BranchesRun int       `json:"branches_run,omitempty"`
	Discoveries int       `json:"discoveries,omitempty"`
	Failing     int       `json:"failing"`
	Findings    []Finding `json:"findings"`
	// FirstFired is, for each checker that fired, the first failing run it
	// fired in: how soon the campaign finds a defect that checker names,
	// whichever checker the failure's bucket is named after.
	FirstFired map[string]FirstFire `json:"first_fired,omitempty"`
	// RunSeconds sums every run's time, the campaign's cost in CPU.
	RunSeconds float64 `json:"run_seconds"`
	// Until is the --until checker that stopped the campaign, if one did.
	Until string `json:"until_fired,omitempty"`
}

// FirstFire is a checker's first failing run in a campaign.
type FirstFire struct {
	// Run counts the runs, seeds and branches in the campaign's order, up
	// to and including it; Seconds sums their run times.
	Run     int     `json:"run"`
	Seconds float64 `json:"run_seconds"`
	Seed    uint64  `json:"seed"`
	Branch  string  `json:"branch,omitempty"`
}

// firstFired finds each checker's first failing run among results, in the
// campaign's order.
func firstFired(results []reports.SeedResult) map[string]FirstFire {
	out := map[string]FirstFire{}
	seconds := 0.0
	for i, r := range results {
		seconds += r.WallSeconds
		if passed(r) {
			continue
		}
		for _, v := range r.Violations {
			if _, seen := out[v.Checker]; !seen {
				out[v.Checker] = FirstFire{Run: i + 1, Seconds: seconds, Seed: r.Seed, Branch: r.Branch}
			}
		}
	}
	return out
}

func exploreCmd(cmd *cobra.Command, f exploreFlags) error {
	if f.budget <= 0 {
		return usageErrorf("--budget: want a positive duration")
	}
	if f.count < 1 || f.count > maxSeedsPerCase {
		return usageErrorf("--count %d: want 1..%d", f.count, maxSeedsPerCase)
	}
	if f.jobs < 1 {
		return usageErrorf("-j %d: want at least 1", f.jobs)
	}
	if f.shrinkBudget < 0 {
		return usageErrorf("--shrink-budget: want a duration of 0 or more")
	}
	until, err := parseCheckerList(f.until)
	if err != nil {
		return usageErrorf("--until: %v", err)
	}
	sys, err := lookupSystem(f.system)
	if err != nil {
		return usageErrorf("--system: %v", err)
	}
	sc, ok := scenarios.Lookup(f.scenario)
	if !ok {
		return usageErrorf("--scenario %q: no such scenario (%s list)", f.scenario, progName)
	}
	if f.branches < 0 || f.branches > 1000 {
		return usageErrorf("--branch %d: want 0..1000 branches per discovery", f.branches)
	}
	if _, err := parseVariant("", f.strategy); err != nil {
		return usageErrorf("%v", err)
	}
	day := time.Now().UTC() // determinism-ok: the date picks the night's seed range, printed first
	if f.date != "" {
		d, err := time.Parse(time.DateOnly, f.date)
		if err != nil {
			return usageErrorf("--date %q: want YYYY-MM-DD", f.date)
		}
		day = d
	}
	first := uint64(exploreFirstSeed) + uint64(day.Unix()/86400)*exploreSeedsPerDay
	if f.from != "" {
		s, err := sim.ParseSeed(f.from)
		if err != nil {
			return usageErrorf("--from: %v", err)
		}
		first = s
	}
	sh, err := parseShard(f.shard)
	if err != nil {
		return usageErrorf("%v", err)
	}
	known := map[string]string{}
	if f.known != "" {
		if known, err = readKnownFindings(f.known); err != nil {
			return usageErrorf("--known %s: %v", f.known, err)
		}
	}
	if err := ensureWritableDir(f.out); err != nil {
		return usageErrorf("--out %s: %v", f.out, err)
	}
	sel := selection{Name: "explore", Cases: []scenarios.Case{{Scenario: sc,
		Seeds: scenarios.SeedRange{First: first, Count: f.count}.Seeds()}}, Custom: []bool{true}}
	sel, fit := fitSelection(sel, sys)
	if len(sel.Cases) == 0 {
		return usageErrorf("--scenario %s: not applicable to system %s: %s", f.scenario, sys.Name(),
			fit.notApplicable[0].NotApplicable)
	}
	tasks := sel.tasks(sh)
	for i := range tasks {
		tasks[i].System, tasks[i].Strategy = f.system, f.strategy
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "explore: %s seeds of system %s from %d (%s), shard %s, budget %s\n", sc.Name, sys.Name(), first,
		day.Format(time.DateOnly), orAll(sh.String()), f.budget)
	workers, intr, err := startRun(stderr, f.out, false, min(f.jobs, len(tasks)))
	if err != nil {
		return err
	}
	defer intr.release()
	start := time.Now() // determinism-ok: wall time is a reported figure
	rf := runFlags{budget: f.budget, allowIncomplete: true, maxArtifacts: 0, until: until}
	var rs *seedRuns
	var all, branched []reports.SeedResult // every run in the campaign's order; the branches
	c := newCampaign(f.branches)
	if f.branches > 0 {
		rs, all = runBranching(intr, workers, tasks, rf, c, newProgress(stderr, len(tasks), "explore"), stderr)
		for _, r := range all {
			if r.Branch != "" {
				branched = append(branched, r)
			}
		}
	} else {
		rs = runSeeds(intr, workers, tasks, rf, newProgress(stderr, len(tasks), "explore"))
		all = rs.results()
	}
	intr.settle(workers)
	wall := time.Since(start) // determinism-ok: figure

	sum := reports.Build("simrun "+version, sel.Name, sh.String(), sel.specs(sys), rs.results(), wall.Seconds())
	sum.System = f.system
	sum.Provenance = provenance()
	if intr.interrupted() {
		sum.Interrupt(intr.signal())
	} else if rs.stopped != "" {
		sum.StoppedBy(rs.stopped, rs.stopped == budgetStop(f.budget) || isUntilStop(rs.stopped))
	}
	if err := writeOutputs(f.out, sum, ""); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	found := &Findings{Tool: "simrun " + version, Provenance: sum.Provenance, Date: day.Format(time.DateOnly), From: first,
		Shard: sh.String(), SeedsRun: len(sum.Seeds), BranchesRun: len(branched), Discoveries: c.discoveries}
	if !intr.interrupted() {
		found.Findings = bucketFailures(stdout, all, known,
			func(r reports.SeedResult) Finding { return shrinkRepresentative(r, f) })
	}
	for _, r := range append(sum.Seeds, branched...) {
		if !passed(r) {
			found.Failing++
		}
	}
	found.FirstFired = firstFired(all)
	for _, r := range all {
		found.RunSeconds += r.WallSeconds
		if found.Until == "" {
			found.Until = firedOneOf(r, until)
		}
	}
	if err := reports.WriteJSONAtomic(filepath.Join(f.out, "findings.json"), found); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	fresh := 0
	for _, fd := range found.Findings {
		state := "known (" + fd.KnownAs + ")"
		if fd.New {
			state = "NEW"
			fresh++
		}
		fmt.Fprintf(stdout, "%s %s: %d runs, shrunk seed %d%s to %d faults\n  replay: %s\n", state, fd.Signature,
			len(fd.Seeds), fd.Seed, branchSuffix(reports.SeedResult{Branch: fd.Branch}), len(fd.Plan), fd.Replay)
	}
	branching := ""
	if f.branches > 0 {
		branching = fmt.Sprintf(" and %d branches from %d discoveries", found.BranchesRun, found.Discoveries)
	}
	if found.Until != "" {
		branching += ", stopped as " + found.Until + " fired"
	}
	fmt.Fprintf(stdout, "explore: %d seeds%s in %s, %d failing, %d buckets (%d new); %s\n", found.SeedsRun, branching,
		wall.Round(time.Second), found.Failing, len(found.Findings), fresh, filepath.Join(f.out, "findings.json"))
	if intr.interrupted() {
		return exitWith(sum.ExitCode())
	}
	if fresh > 0 {
		return exitWith(exitSafety)
	}
	return nil
}

// parseCheckerList reads a comma-separated list of checker names.
func parseCheckerList(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if s == anyChecker {
		return []string{anyChecker}, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !checkerName.MatchString(name) {
			return nil, fmt.Errorf("%q is not a checker name (lower case, digits and _)", name)
		}
		out = append(out, name)
	}
	return out, nil
}

var checkerName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func orAll(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

// bucketFailures groups failing seeds by scenario and first checker, shrinks
// the first seed of each group, and keys the bucket by the shrunk plan's fault
// kinds too. A bucket whose representative is a pinned regression seed, or
// whose signature an earlier findings file has, is not new.
func bucketFailures(w io.Writer, results []reports.SeedResult, known map[string]string,
	shrink func(reports.SeedResult) Finding) []Finding {
	pinned := map[string]string{}
	for _, c := range scenarios.Regression().Cases {
		for _, s := range c.Seeds {
			pinned[fmt.Sprintf("%s/%d", c.Scenario.Name, s)] = c.Finding
		}
	}
	type group struct {
		first   reports.SeedResult
		seeds   []uint64
		runs    int
		seconds float64
	}
	groups := map[string]*group{}
	var order []string
	seconds := 0.0
	for i, r := range results {
		seconds += r.WallSeconds
		if passed(r) {
			continue
		}
		key := r.Scenario + " / " + primaryChecker(r)
		g, ok := groups[key]
		if !ok {
			g = &group{first: r, runs: i + 1, seconds: seconds}
			groups[key] = g
			order = append(order, key)
		}
		g.seeds = append(g.seeds, r.Seed)
	}
	byKey := map[string]int{}
	var out []Finding
	for _, key := range order {
		g := groups[key]
		fd := shrink(g.first)
		fd.Seeds, fd.RunsToFirst, fd.SecondsToFirst = g.seeds, g.runs, g.seconds
		if i, ok := byKey[fd.Signature]; ok {
			out[i].Seeds = append(out[i].Seeds, g.seeds...)
			continue
		}
		fd.New = true
		if name, ok := pinned[fmt.Sprintf("%s/%d", fd.Scenario, fd.Seed)]; ok && fd.Branch == "" && fd.Strategy == "" {
			fd.New, fd.KnownAs = false, "regression "+name
		} else if name, ok := known[fd.Signature]; ok {
			fd.New, fd.KnownAs = false, name
		}
		byKey[fd.Signature] = len(out)
		out = append(out, fd)
		fmt.Fprintf(w, "shrunk %s seed %d: %s\n", fd.Scenario, fd.Seed, fd.Signature)
	}
	return out
}

// shrinkRepresentative shrinks one failing seed's plan in this process, as
// simrun shrink does, and signs the bucket with the minimal plan's kinds.
func shrinkRepresentative(r reports.SeedResult, f exploreFlags) Finding {
	sc, _ := scenarios.Lookup(r.Scenario)
	sys, _ := lookupSystem(r.System) // the run's own system, registered: its task named it
	v := variantOf(r)
	sc = sc.On(sys).With(v)
	target := primaryChecker(r)
	fd := Finding{Scenario: r.Scenario, Checker: target, Seed: r.Seed, Branch: r.Branch, Strategy: r.Strategy,
		Replay: replayFromSummary(f.out, r.System, r.Scenario, r.Seed, v)}
	if r.Branch != "" {
		// A branch is not in summary.json: its key alone replays it.
		fd.Replay = replaySeed(r.System, r.Scenario, r.Seed, v)
	}
	o := sc.RunTraced(r.Seed, nil)
	fails := func(p faults.Plan) bool {
		c := sc.RunPlan(r.Seed, p)
		return failsWith(reports.SeedResultOf(reportRun(c), sc.ExpectViolation), target)
	}
	deadline := time.Now().Add(f.shrinkBudget) // determinism-ok: a wall-clock budget on the CLI
	minimal, complete := o.Plan, false
	if f.shrinkBudget > 0 && fails(o.Plan) {
		minimal, complete = ddmin(o.Plan, fails, func() bool { return time.Now().After(deadline) }) // determinism-ok: budget
	}
	fd.Complete = complete
	for _, e := range minimal.Entries {
		fd.Plan = append(fd.Plan, e.String())
	}
	fd.Kinds, fd.Signature = signature(fd.Scenario, target, minimal)
	return fd
}

// signature keys a bucket: the scenario, the checker, and the distinct fault
// kinds of the shrunk plan, sorted (how often each fired, and where, is not
// part of it).
func signature(scenario, checker string, minimal faults.Plan) (kinds []string, sig string) {
	seen := map[string]bool{}
	for _, e := range minimal.Entries {
		if !seen[e.Kind] {
			seen[e.Kind] = true
			kinds = append(kinds, e.Kind)
		}
	}
	sort.Strings(kinds)
	return kinds, fmt.Sprintf("%s / %s / [%s]", scenario, checker, strings.Join(kinds, " "))
}

// readKnownFindings reads an earlier findings.json: signature -> where it
// was first reported.
func readKnownFindings(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var prev Findings
	if err := json.Unmarshal(b, &prev); err != nil {
		return nil, fmt.Errorf("not a findings file: %v", err)
	}
	out := map[string]string{}
	for _, fd := range prev.Findings {
		name := fd.KnownAs
		if name == "" {
			name = fmt.Sprintf("found %s, seed %d", prev.Date, fd.Seed)
		}
		out[fd.Signature] = name
	}
	return out, nil
}
