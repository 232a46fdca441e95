package simrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
)

// runFlags are the flags of simrun run.
type runFlags struct {
	suite, scenario string
	system          string
	seeds           seedFlags
	jobs            int
	shard           string
	out             string
	json            bool
	junit           string
	budget          time.Duration
	allowIncomplete bool
	failFast        bool
	maxArtifacts    int
	verbose         bool
	discardPrevious bool
	strategy        string
	live            liveFlags
	// until stops starting runs once a run fails with one of these
	// checkers (explore --until): a hunt for one defect ends at its kill.
	until []string
}

// defaultMaxArtifacts bounds the failing seeds that get a folder of
// artifacts: one broken engine must not write gigabytes. summary.json keeps
// every failing seed.
const defaultMaxArtifacts = 20

// liveFailureLines bounds the failures printed as they happen; the rest are
// counted and grouped at the end.
const liveFailureLines = 10

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use: "run",
		Short: "Run a suite or a scenario over seeds; exit 0 pass, 1 safety, 3 liveness, 4 inconclusive, " +
			"5 non-deterministic, 6 incomplete, 7 harness, 130/143 interrupted",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSuite(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "", "suite to run (release, exploratory, regression; default release)")
	fl.StringVar(&f.scenario, "scenario", "", "run one scenario instead of a suite")
	fl.StringVar(&f.system, "system", defaultSystem(), systemUsage())
	fl.StringVar(&f.strategy, "strategy", "", strategyUsage)
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print every seed's options (world, system, faults) before the seeds run")
	fl.StringVar(&f.seeds.seed, "seed", "", "run this seed (decimal, 0x-hex or a 40-hex commit id)")
	fl.StringVar(&f.seeds.seeds, "seeds", "", "run seeds A..B, both included")
	fl.IntVar(&f.seeds.count, "count", 0, "run N seeds: from --seed, or from the start of each range")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.NumCPU(), "seeds run in parallel, one worker process each")
	fl.StringVar(&f.shard, "shard", "", "run only shard I of N (I/N, 1-based) of the seeds")
	fl.StringVar(&f.out, "out", "simrun-out", "directory for summary.json, index.html and failing seeds' artifacts; "+
		"a previous run's failing seeds there are moved aside into previous-run-N first")
	fl.BoolVar(&f.discardPrevious, "discard-previous", false, "delete a previous run's outputs in --out instead of moving them aside")
	fl.BoolVar(&f.json, "json", false, "print summary.json to stdout instead of the text summary")
	fl.StringVar(&f.junit, "junit", "", "also write JUnit XML to this file")
	fl.DurationVar(&f.budget, "budget", 0, "stop starting seeds after this long (0: no limit); unrun seeds make the verdict incomplete")
	fl.BoolVar(&f.allowIncomplete, "allow-incomplete", false, "seeds a --budget left unrun do not fail the verdict (exploration)")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop starting seeds at the first failing seed")
	fl.IntVar(&f.maxArtifacts, "max-artifacts", defaultMaxArtifacts, "write artifact folders for at most N failing seeds "+
		"(the first of each failure group first); summary.json lists them all")
	addLiveFlags(fl, &f.live)
	return cmd
}

// runSuite is simrun run: validate every input and output before the first
// seed, run the seeds, write the failing seeds' artifacts, then the outputs.
func runSuite(cmd *cobra.Command, f runFlags) error {
	if err := checkLiveFlags(cmd, f.live); err != nil {
		return err
	}
	if f.live.on {
		return runLive(cmd, f)
	}
	if cmd.Flags().Changed("count") && f.seeds.count == 0 {
		return usageErrorf("--count 0: want at least 1")
	}
	sys, err := lookupSystem(f.system)
	if err != nil {
		return usageErrorf("--system: %v", err)
	}
	sel, err := selectCases(f.suite, f.scenario, f.seeds)
	if err != nil {
		return usageErrorf("%v", err)
	}
	sel, fit := fitSelection(sel, sys) // suites that fit the system: see the end of this file
	if len(sel.Cases) == 0 {
		return usageErrorf("%s: not applicable to system %s: %s", fit.notApplicable[0].Scenario.Name, sys.Name(),
			fit.notApplicable[0].NotApplicable)
	}
	sh, err := parseShard(f.shard)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if _, err := parseVariant("", f.strategy); err != nil {
		return usageErrorf("%v", err)
	}
	switch {
	case f.jobs < 1:
		return usageErrorf("-j %d: want at least 1", f.jobs)
	case f.budget < 0:
		return usageErrorf("--budget %s: want a positive duration", f.budget)
	case f.maxArtifacts < 0:
		return usageErrorf("--max-artifacts %d: want 0 or more", f.maxArtifacts)
	case f.allowIncomplete && f.budget == 0:
		return usageErrorf("--allow-incomplete needs a --budget: it accepts the seeds a budget leaves unrun")
	}
	if err := ensureWritableDir(f.out); err != nil {
		return usageErrorf("--out %s: %v", f.out, err)
	}
	if f.junit != "" {
		if err := ensureWritableFile(f.junit); err != nil {
			return usageErrorf("--junit %s: %v", f.junit, err)
		}
	}
	tasks := sel.tasks(sh)
	for i := range tasks {
		tasks[i].System, tasks[i].Strategy = f.system, f.strategy
	}
	if f.verbose {
		printSeedOptions(cmd.ErrOrStderr(), tasks, sys)
	}
	if len(tasks) == 0 {
		return usageErrorf("shard %s of %s has no seeds", sh, sel.Name)
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	workers, intr, err := startRun(stderr, f.out, f.discardPrevious, min(f.jobs, len(tasks)))
	if err != nil {
		return err
	}
	defer intr.release()

	start := time.Now() // determinism-ok: wall time is a reported figure
	what := sel.Name
	if sh.N > 1 {
		what += " shard " + sh.String()
	}
	rs := runSeeds(intr, workers, tasks, f, newProgress(stderr, len(tasks), what))
	if !intr.interrupted() {
		rs.writeArtifacts(intr, workers, f)
	}
	intr.settle(workers)
	rs.removeHalfWritten(f.out) // only now can no worker be writing one
	wall := time.Since(start)   // determinism-ok: figure

	sum := reports.Build("simrun "+version, sel.Name, sh.String(), sel.specs(sys), rs.results(), wall.Seconds())
	sum.System = f.system
	for _, c := range fit.notApplicable {
		sum.NotApplicable = append(sum.NotApplicable, reports.NotApplicableCase{Case: caseLabel(c), Reason: c.NotApplicable})
	}
	sum.Provenance = provenance()
	switch {
	case intr.interrupted():
		sum.Interrupt(intr.signal())
	case rs.stopped != "":
		sum.StoppedBy(rs.stopped, f.allowIncomplete && rs.stopped == budgetStop(f.budget))
	}
	if err := writeOutputs(f.out, sum, f.junit); err != nil {
		// An output that could not be written is said, but never hides a
		// failing verdict behind exit 2.
		code := sum.ExitCode()
		if code == exitPass {
			code = exitUsage
		}
		return &exitError{code: code, err: err}
	}
	if err := writeGitHubOutputs(stdout, sum); err != nil {
		fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
	}
	if f.json {
		if err := writeJSON(stdout, sum); err != nil {
			return err
		}
	} else {
		printSummary(stdout, sum, rs.failures(), f.out, wall, fit)
	}
	for _, err := range rs.errs {
		fmt.Fprintln(stderr, "simrun: "+oneLine(err.Error()))
	}
	if rs.nondet && !intr.interrupted() {
		return exitWith(exitNondeterministic)
	}
	return exitWith(sum.ExitCode())
}

func budgetStop(d time.Duration) string { return "budget " + d.String() + " spent" }

// seedRuns collects a run's seeds: each task's result by its index, the
// failures told in full, and why seeds were left unrun.
type seedRuns struct {
	tasks   []task
	done    []*seedRun // by task index; nil: not run
	told    map[int]string
	errs    []error
	nondet  bool
	stopped string // budget, --fail-fast, a dead worker
	// unwritten are the artifact tasks whose folder is not known to be whole.
	unwritten map[int]bool
}

// runSeeds runs every task until done, the budget, --fail-fast, or an
// interrupt.
func runSeeds(intr *interrupts, workers []worker, tasks []task, f runFlags, prog *progress) *seedRuns {
	rs := &seedRuns{tasks: tasks, done: make([]*seedRun, len(tasks)), told: map[int]string{}}
	for i := range tasks {
		tasks[i].Index = i
	}
	ctx, cancel := context.WithCancel(intr.ctx)
	defer cancel()
	if f.budget > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, f.budget) // determinism-ok: a wall-clock budget on the CLI, outside the simulation
		defer stop()
	}
	live := 0
	died := false
	runPool(ctx, intr.abandon, workers, tasks, func(o outcome) {
		if o.err != nil {
			var nd *errNondeterministic
			var wd *errWorkerDied
			rs.nondet = rs.nondet || errors.As(o.err, &nd)
			died = died || errors.As(o.err, &wd)
			if !intr.interrupted() { // a killed worker is the interrupt, not news
				rs.errs = append(rs.errs, o.err)
				prog.fail(o.err.Error())
			}
		}
		if o.run.Result.Scenario == "" {
			prog.done(false)
			return
		}
		run := o.run
		rs.done[o.task.Index] = &run
		ok := passed(run.Result)
		if !ok {
			if live < liveFailureLines {
				prog.fail(oneLineFailure(run.Result))
			} else if live == liveFailureLines {
				prog.fail("simrun: further failures are counted, and grouped at the end")
			}
			live++
			if f.failFast || firedOneOf(run.Result, f.until) != "" {
				cancel()
			}
		}
		prog.done(ok)
	})
	prog.finish()
	switch {
	case intr.interrupted():
	case f.failFast && live > 0 && rs.notRun() > 0:
		rs.stopped = "--fail-fast after the first failing seed"
	case rs.notRun() > 0 && rs.untilFired(f.until) != "":
		rs.stopped = untilStop(rs.untilFired(f.until))
	case died && rs.notRun() > 0:
		rs.stopped = "a worker process died"
	case rs.notRun() > 0 && f.budget > 0 && ctx.Err() != nil:
		rs.stopped = budgetStop(f.budget)
	case rs.notRun() > 0:
		rs.stopped = "seeds without a result"
	}
	return rs
}

func oneLineFailure(r reports.SeedResult) string {
	what := "linearizability " + r.Linearizability
	if v, ok := reports.FirstFinding(r.Violations); ok {
		what = v.Checker + ": " + oneLine(v.Message)
	}
	return fmt.Sprintf("FAIL %s seed %d (%s) %s", r.Scenario, r.Seed, r.Verdict, what)
}

// anyChecker, alone in --until, is every checker.
const anyChecker = "any"

// firedOneOf is the first of checkers that fired in r (outside the
// environment and harness layers: a broken store or a broken harness is not
// the defect hunted), or "".
func firedOneOf(r reports.SeedResult, checkers []string) string {
	if len(checkers) == 0 || passed(r) {
		return ""
	}
	for _, v := range r.Violations {
		hunted := v.Layer != string(checker.LayerEnvironment) && v.Layer != string(checker.LayerHarness)
		if hunted && (slices.Contains(checkers, v.Checker) || checkers[0] == anyChecker) {
			return v.Checker
		}
	}
	return ""
}

// untilStop is why a run stopped at an --until checker; isUntilStop
// recognises it: like a spent budget, a stop the run asked for.
func untilStop(fired string) string { return untilPrefix + fired + " fired" }

func isUntilStop(stopped string) bool { return strings.HasPrefix(stopped, untilPrefix) }

const untilPrefix = "--until: "

// untilFired is the --until checker that fired in the runs, or "".
func (rs *seedRuns) untilFired(checkers []string) string {
	for _, d := range rs.done {
		if d != nil {
			if c := firedOneOf(d.Result, checkers); c != "" {
				return c
			}
		}
	}
	return ""
}

func (rs *seedRuns) notRun() int {
	n := 0
	for _, d := range rs.done {
		if d == nil {
			n++
		}
	}
	return n
}

// writeArtifacts runs the chosen failing seeds again with their trace kept
// (which doubles as a determinism check) and writes their folders.
func (rs *seedRuns) writeArtifacts(intr *interrupts, workers []worker, f runFlags) {
	var jobs []task
	for _, i := range rs.artifactPicks(f.maxArtifacts) {
		t := rs.tasks[i]
		t.Artifacts, t.Checksum = true, rs.done[i].Result.Checksum
		jobs = append(jobs, t)
	}
	if len(jobs) == 0 {
		return
	}
	rs.unwritten = map[int]bool{}
	for _, t := range jobs {
		rs.unwritten[t.Index] = true
	}
	runPool(intr.ctx, intr.abandon, workers, jobs, func(o outcome) {
		if o.err != nil {
			var nd *errNondeterministic
			rs.nondet = rs.nondet || errors.As(o.err, &nd)
			if !intr.interrupted() {
				rs.errs = append(rs.errs, o.err)
			}
			return
		}
		delete(rs.unwritten, o.task.Index)
		d := rs.done[o.task.Index]
		d.Result.Artifacts, d.Result.Replay = o.run.Result.Artifacts, o.run.Result.Replay
		if o.run.Result.Verdict == reports.VerdictHarness {
			// The re-run kept its trace: its harness fault carries the
			// trace's tail up to the fault, which the first run could not.
			d.Result.Violations = o.run.Result.Violations
		}
		rs.told[o.task.Index] = o.run.Failure
	})
}

// removeHalfWritten removes the folders of artifact tasks that did not
// finish (an interrupt, a failed write): a folder that is there is whole.
func (rs *seedRuns) removeHalfWritten(out string) {
	for i := range rs.unwritten {
		t := rs.tasks[i]
		v, _ := parseVariant(t.Branch, t.Strategy)
		_ = os.RemoveAll(filepath.Join(out, artifactDir(t.Scenario, t.Seed, v)))
	}
}

// artifactPicks chooses which failing seeds get artifacts, in run order: the
// first seed of each failure group, then the rest, up to max.
func (rs *seedRuns) artifactPicks(max int) []int {
	var picks []int
	picked := map[int]bool{}
	groups := map[string]bool{}
	for pass := range 2 {
		for i, d := range rs.done {
			if len(picks) == max {
				break
			}
			if d == nil || passed(d.Result) || picked[i] {
				continue
			}
			key := d.Result.Scenario + "\x00" + firstChecker(d.Result)
			if pass == 0 && groups[key] {
				continue
			}
			groups[key] = true
			picked[i] = true
			picks = append(picks, i)
		}
	}
	sort.Ints(picks)
	return picks
}

// firstChecker names a failing seed's group: its first job-level finding's
// checker before any counter mismatch (reports.FirstChecker).
func firstChecker(r reports.SeedResult) string { return reports.FirstChecker(r) }

// results are the seeds that ran, in run order. A failing seed without
// artifacts replays from summary.json's checksum under the same --out.
func (rs *seedRuns) results() []reports.SeedResult {
	var out []reports.SeedResult
	for _, d := range rs.done {
		if d != nil {
			out = append(out, d.Result)
		}
	}
	return out
}

// failures are the failures told in full, in run order.
func (rs *seedRuns) failures() []string {
	idx := make([]int, 0, len(rs.told))
	for i := range rs.told {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = rs.told[i]
	}
	return out
}

// startRun clears out of a previous run's outputs (moved aside unless
// discard), starts n workers writing there and watches for interrupts.
func startRun(stderr io.Writer, out string, discard bool, n int) ([]worker, *interrupts, error) {
	moved, movedTo, err := cleanOutDir(out, discard)
	if err != nil {
		return nil, nil, usageErrorf("--out %s: clear the previous run: %v", out, err)
	}
	reportCleared(stderr, out, moved, movedTo)
	workers, err := startWorkers(n, out)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, err: err}
	}
	return workers, watchInterrupts(stderr, workers), nil
}

func startWorkers(n int, out string) ([]worker, error) {
	if n == 1 {
		return []worker{newLocalWorker(out)}, nil
	}
	var ws []worker
	for range n {
		w, err := startProcessWorker(out)
		if err != nil {
			for _, started := range ws {
				_ = started.close()
			}
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// ensureWritableDir creates dir and proves it takes a file.
func ensureWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// ensureWritableFile proves path can be written later: its directory takes a
// file and path itself is not a directory.
func ensureWritableFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	return ensureWritableDir(filepath.Dir(path))
}

// writeOutputs writes summary.json, index.html and, if asked, JUnit XML.
func writeOutputs(out string, sum *reports.Summary, junit string) error {
	if err := reports.WriteJSONAtomic(filepath.Join(out, "summary.json"), sum); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := reports.WriteFileAtomic(filepath.Join(out, "index.html"), func(w io.Writer) error {
		return reports.WriteIndex(w, sum)
	}); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if junit != "" {
		if err := reports.WriteFileAtomic(junit, func(w io.Writer) error { return reports.WriteJUnit(w, sum) }); err != nil {
			return fmt.Errorf("write junit: %w", err)
		}
	}
	return nil
}

// printSummary ends a run: the failures told in full (options first, replay
// line last), the failure groups, one line per case, and the totals.
func printSummary(w io.Writer, sum *reports.Summary, failures []string, out string, wall time.Duration, fit fitted) {
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	for _, g := range sum.Groups {
		fmt.Fprintf(w, "GROUP %s / %s: %d failing seeds (%s), first seed %d\n      replay: %s\n",
			g.Scenario, g.Checker, g.Count, g.Verdict, g.FirstSeed, g.Replay)
	}
	for _, c := range sum.Cases {
		status := "ok  "
		switch {
		case !c.Passed && c.Verdict == reports.VerdictIncomplete:
			status = "PART"
		case !c.Passed:
			status = "FAIL"
		}
		ran := len(c.Seeds) - len(c.Missing)
		line := fmt.Sprintf("%s %-44s %3d seeds", status, reports.CaseName(c.CaseSpec), ran)
		if len(c.NotRun) > 0 {
			line += fmt.Sprintf("  (%d not run)", len(c.NotRun))
		}
		if len(c.Failed) > 0 {
			line += fmt.Sprintf("  failed: %s", seedsBrief(c.Failed))
		}
		if len(c.Environment) > 0 {
			line += fmt.Sprintf("  environment broke its contract: %s", seedsBrief(c.Environment))
		}
		for _, k := range c.NeverFired {
			line += "  never fired: " + k
		}
		fmt.Fprintln(w, line)
		printNeverFiredLeads(w, c)
	}
	fit.print(w, sum)
	rate := float64(len(sum.Seeds)) / max(wall.Seconds(), 1e-9)
	tail := ""
	if sum.NotRun > 0 {
		tail = fmt.Sprintf(", %d not run", sum.NotRun)
	}
	if sum.Stopped != "" {
		tail += " (" + sum.Stopped + ")"
	}
	fmt.Fprintf(w, "%s: %s, %d of %d seeds in %s (%.1f seeds/s)%s; summary %s\n", sum.Suite, sum.Verdict,
		len(sum.Seeds), sum.Planned, wall.Round(time.Millisecond), rate, tail, filepath.Join(out, "summary.json"))
}

// seedsBrief lists up to ten seeds, then a count.
func seedsBrief(seeds []uint64) string {
	const shown = 10
	parts := make([]string, 0, shown+1)
	for i, s := range seeds {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(seeds)-shown))
			break
		}
		parts = append(parts, fmt.Sprint(s))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func newWorkerCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "Run tasks from stdin as JSON lines (used by run -j N)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveWorker(cmd.InOrStdin(), cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "simrun-out", "artifact directory")
	return cmd
}

// ---- Suites that fit the system (scenarios.Case.For) ----
//
// The cases are fitted to the system before anything runs: a case that
// cannot apply leaves the run and is listed with its reason (neither a pass
// nor a fail, and none of its seeds is planned, so none is missing); a case
// whose seeds the flags chose keeps its sometimes-expectations as advice,
// as its declared kinds already were (selection.specs). Expected findings
// travel with each seed's branches (scenarios.ExpectedKey).

// fitted is what fitting did to a run's cases, for the summary.
type fitted struct {
	notApplicable []scenarios.Case
	cases         []scenarios.Case // the cases that run, fitted, in order
	advisory      map[int][]string // case index -> its sometimes-expectations, only advised
}

// fitSelection fits each case of sel to sys.
func fitSelection(sel selection, sys sut.System) (selection, fitted) {
	out := selection{Name: sel.Name}
	fit := fitted{advisory: map[int][]string{}}
	for i, c := range sel.Cases {
		c = c.For(sys)
		if c.NotApplicable != "" {
			fit.notApplicable = append(fit.notApplicable, c)
			continue
		}
		if sel.Custom[i] {
			c.Partial = true
			if len(c.Sometimes) > 0 {
				fit.advisory[len(out.Cases)] = c.Sometimes
				c.Sometimes = nil
			}
		}
		out.Cases = append(out.Cases, c)
		out.Custom = append(out.Custom, sel.Custom[i])
	}
	fit.cases = out.Cases
	return out, fit
}

// print lists the cases that do not apply, each case's expected findings,
// kinds and expectations its system cannot reach, and what a partial run
// only advises.
func (fit fitted) print(w io.Writer, sum *reports.Summary) {
	for _, c := range fit.notApplicable {
		fmt.Fprintf(w, "n/a  %-44s not applicable: %s\n", caseLabel(c), c.NotApplicable)
	}
	for i, c := range fit.cases {
		expected, reached := map[string]int{}, map[string]bool{}
		for _, r := range sum.Seeds {
			if r.Scenario != c.Scenario.Name || r.Finding != c.Finding || !slices.Contains(c.Seeds, r.Seed) {
				continue
			}
			for k, n := range r.Branches {
				if name, ok := strings.CutPrefix(k, scenarios.ExpectedKey("")); ok && n > 0 {
					expected[name] += n
				}
				reached[k] = reached[k] || n > 0
			}
		}
		if len(expected) > 0 {
			fmt.Fprintf(w, "     %-44s expected findings (allowed by the %s promise, not failures): %s\n", caseLabel(c),
				c.Scenario.System.Spec(sut.Options{}).Delivery, scenarios.FormatCounts(expected))
		}
		if len(c.Dropped) > 0 {
			fmt.Fprintf(w, "     %-44s not declared for %s: %s\n", caseLabel(c), c.Scenario.System.Name(),
				strings.Join(c.Dropped, "; "))
		}
		for _, b := range fit.advisory[i] {
			what := "not reached"
			if reached[b] {
				what = "reached"
			}
			fmt.Fprintf(w, "     %-44s advisory: sometimes %s %s on these seeds (judged only over the case's whole range)\n",
				caseLabel(c), b, what)
		}
	}
}

func caseLabel(c scenarios.Case) string {
	if c.Finding != "" {
		return "regression/" + c.Finding
	}
	return c.Scenario.Name
}
