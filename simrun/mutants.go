package simrun

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/mutants"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// offsetStride separates the seed offsets of a mutants run: far above every
// release range, so an offset run meets seeds no other offset ran.
const offsetStride = 1_000_000

// mutantsFlags are the flags of simrun mutants.
type mutantsFlags struct {
	root       string
	suite      string
	scenario   string
	seeds      string
	jobs       int
	failFast   bool
	budget     time.Duration
	seedWait   time.Duration
	offsets    int
	only       string
	gremlins   string
	equivalent string
	toolBudget time.Duration
	toolOnly   string
	cover      string
	catalog    bool
	out        string
	json       bool
	deep       bool
	hunt       string
	huntFlags  huntFlags
	huntFrom   string
}

func newMutantsCmd() *cobra.Command {
	var f mutantsFlags
	cmd := &cobra.Command{
		Use: "mutants",
		Short: "Build the engine with each catalog defect (and, with --gremlins, each tool mutant) put back and run the " +
			"release suite against it; exit 1 if a catalog mutant survives",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return mutantsCmd(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", ".", "the module root (holds go.mod and engine/)")
	fl.StringVar(&f.suite, "suite", "release", "suite that must kill each mutant")
	fl.StringVar(&f.scenario, "scenario", "", "one scenario instead of a suite (its release range, or --seeds): "+
		"can it alone kill each mutant?")
	fl.StringVar(&f.seeds, "seeds", "", "with --scenario: the seeds A..B (inclusive) instead of its range")
	fl.IntVarP(&f.jobs, "jobs", "j", 2, "mutants run in parallel, one build and one worker process each")
	fl.BoolVar(&f.failFast, "fail-fast", true, "stop a mutant's suite at its first failing seed")
	fl.DurationVar(&f.budget, "budget", 10*time.Minute, "stop a mutant's suite after this long: it survived the seeds it ran")
	fl.DurationVar(&f.seedWait, "seed-timeout", 2*time.Minute, "a seed that runs longer is a hang: the mutant timed out")
	fl.IntVar(&f.offsets, "offsets", 1, fmt.Sprintf("run the suite from N seed offsets (0, %d, ...; pinned regression "+
		"seeds stay) for the median and p90 seeds and seconds to kill", offsetStride))
	fl.BoolVar(&f.catalog, "catalog", true, "run the catalog (--catalog=false with --gremlins runs the tool's mutants alone)")
	fl.StringVar(&f.only, "only", "", "comma-separated mutant names (catalog) to run instead of all")
	fl.StringVar(&f.gremlins, "gremlins", "", "also run the mutants listed in this gremlins --output file "+
		"(NOT COVERED ones are not reached and not run)")
	fl.StringVar(&f.equivalent, "equivalent", "mutants/equivalent.txt", "triage file: tool mutants known to be equivalent (under --root)")
	fl.DurationVar(&f.toolBudget, "tool-budget", 0, "stop starting tool mutants after this long (0: no limit); "+
		"they run in a fixed order spread over the files, so a budget runs a sample, and the rest are not run")
	fl.StringVar(&f.cover, "cover", "", "with --gremlins: a coverage profile of the suite over engine/ (go test ./scenarios "+
		"-run '^TestRelease$' -coverpkg ./engine/... -coverprofile FILE); a NOT COVERED mutant the profile shows reached "+
		"(a switch case's expression, which the tool maps to no block) is run")
	fl.StringVar(&f.toolOnly, "tool-only", "", "run only the tool mutants whose site (engine/file.go:line:column TYPE) "+
		"matches this regular expression; the others are left out of the run and its counts")
	fl.BoolVar(&f.deep, "deep", false, "also run the deep defects (two rare events in a row; outside the score and the gate)")
	fl.StringVar(&f.hunt, "hunt", "", "also hunt each mutant (catalog, deep, and tool survivors) with explore campaigns on "+
		"--hunt-scenario, one per mode and first seed, until a checker it names fires: comma-separated modes seeds "+
		"(independent seeds), branch (branching from rare moments), or a strategy (pct, pct:D, swarm)")
	fl.DurationVar(&f.huntFlags.budget, "hunt-budget", 100*time.Second, "with --hunt: one campaign's budget")
	fl.IntVar(&f.huntFlags.starts, "hunt-starts", 3, fmt.Sprintf("with --hunt: campaigns per mode, from first seeds "+
		"%d apart, for the medians", huntStride))
	fl.StringVar(&f.huntFlags.scenario, "hunt-scenario", "swarm", "with --hunt: the scenario the campaigns draw fresh "+
		"seeds of (sparse-swarm: point faults as rare as production's)")
	fl.StringVar(&f.huntFrom, "hunt-from", "7000000", "with --hunt: the first campaign's first seed")
	fl.IntVar(&f.huntFlags.branches, "hunt-branches", 8, "with --hunt: the branch mode's branches per discovery")
	fl.StringVar(&f.out, "out", "simrun-mutants", "directory for mutants.json and mutants.html")
	fl.BoolVar(&f.json, "json", false, "print mutants.json to stdout instead of the table")
	return cmd
}

// mutantJob is one mutant to build and run.
type mutantJob struct {
	mutant mutants.Mutant
	result reports.MutantResult
	skip   bool // status decided without a run (not reached, equivalent)
}

func mutantsCmd(cmd *cobra.Command, f mutantsFlags) error {
	switch {
	case f.jobs < 1:
		return usageErrorf("-j %d: want at least 1", f.jobs)
	case f.offsets < 1 || f.offsets > 100:
		return usageErrorf("--offsets %d: want 1..100", f.offsets)
	case f.budget <= 0:
		return usageErrorf("--budget %s: want a positive duration", f.budget)
	case f.seedWait <= 0:
		return usageErrorf("--seed-timeout %s: want a positive duration", f.seedWait)
	}
	if _, err := os.Stat(filepath.Join(f.root, "go.mod")); err != nil {
		return usageErrorf("--root %s: no go.mod there", f.root)
	}
	if f.seeds != "" && f.scenario == "" {
		return usageErrorf("--seeds needs --scenario")
	}
	if err := f.parseHunt(cmd); err != nil {
		return usageErrorf("%v", err)
	}
	suiteName := f.suite
	if f.scenario != "" && !cmd.Flags().Changed("suite") {
		suiteName = ""
	}
	sel, err := selectCases(suiteName, f.scenario, seedFlags{seeds: f.seeds})
	if err != nil {
		return usageErrorf("%v", err)
	}
	suite := scenarios.Suite{Name: sel.Name, Cases: sel.Cases}
	jobs, err := collectMutants(f)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := ensureWritableDir(f.out); err != nil {
		return usageErrorf("--out %s: %v", f.out, err)
	}
	offsets := make([]uint64, f.offsets)
	for i := range offsets {
		offsets[i] = uint64(i) * offsetStride
	}
	stderr := cmd.ErrOrStderr()
	start := time.Now() // determinism-ok: wall time is a reported figure
	var mu sync.Mutex
	next := make(chan *mutantJob)
	var wg sync.WaitGroup
	for range f.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				runMutant(j, suite, offsets, f)
				mu.Lock()
				r := j.result
				line := fmt.Sprintf("%-10s %s", r.Status, r.Name)
				if r.Status == reports.MutantKilled {
					line += fmt.Sprintf(" by %s after %d seeds, %.1fs", r.Checker, r.SeedsToKill, r.SecondsToKill)
				}
				if r.Reason != "" {
					line += " (" + r.Reason + ")"
				}
				fmt.Fprintln(stderr, line)
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		switch {
		case j.skip:
		case f.toolBudget > 0 && j.result.Kind != "catalog" && time.Since(start) > f.toolBudget: // determinism-ok: budget
			j.result.Status = reports.MutantNotRun
		default:
			next <- j
		}
	}
	close(next)
	wg.Wait()

	sum := &reports.MutantsSummary{Tool: "simrun " + version, Provenance: provenance(),
		Date:    time.Now().UTC().Format(time.RFC3339), // determinism-ok: a report's date
		Command: "simrun " + strings.Join(os.Args[1:], " "), Suite: suite.Name, System: defaultSystem(), Jobs: f.jobs, Offsets: offsets,
		WallSeconds: time.Since(start).Seconds()} // determinism-ok: figure
	for _, m := range f.huntFlags.modes {
		sum.HuntModes = append(sum.HuntModes, m.name)
	}
	if len(sum.HuntModes) > 0 {
		sum.HuntBudget, sum.HuntScenario = f.huntFlags.budget.Seconds(), f.huntFlags.scenario
	}
	for _, j := range jobs {
		sum.Mutants = append(sum.Mutants, j.result)
	}
	sum.Tally()
	if err := reports.WriteJSONAtomic(filepath.Join(f.out, "mutants.json"), sum); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if err := reports.WriteFileAtomic(filepath.Join(f.out, "mutants.html"), func(w io.Writer) error {
		return reports.WriteMutantsHTML(w, sum)
	}); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if f.json {
		if err := writeJSON(cmd.OutOrStdout(), sum); err != nil {
			return err
		}
	} else {
		printKillTable(cmd.OutOrStdout(), sum, f.out)
	}
	if s := sum.Survivors(); len(s) > 0 {
		return &exitError{code: exitSafety, err: fmt.Errorf("catalog mutants not killed by the %s suite: %s",
			suite.Name, strings.Join(s, ", "))}
	}
	return nil
}

// collectMutants is the catalog (or --only's part of it) and, with
// --gremlins, the tool's mutants with the statuses decided without a run.
func collectMutants(f mutantsFlags) ([]*mutantJob, error) {
	var jobs []*mutantJob
	catalog := mutants.All
	if !f.catalog {
		catalog = nil
	}
	if f.deep {
		catalog = append(slices.Clone(catalog), mutants.Deep...)
	}
	if f.only != "" {
		catalog = nil
		for _, name := range strings.Split(f.only, ",") {
			m, ok := mutants.Lookup(strings.TrimSpace(name))
			if !ok {
				return nil, fmt.Errorf("--only: unknown mutant %q", name)
			}
			catalog = append(catalog, m)
		}
	}
	for _, m := range catalog {
		kind := "catalog"
		if mutants.IsDeep(m.Name) {
			kind = reports.Deep
		}
		j := &mutantJob{mutant: m, result: reports.MutantResult{Name: m.Name, Kind: kind,
			Origin: m.Origin, Description: m.Description, Expected: m.Catches}}
		if m.Absorbed != nil {
			// Its evidence is an engine test (mutants' TestAbsorbedMutantsAreEquivalent), not a run.
			j.skip, j.result.Status = true, reports.MutantEquivalent
			j.result.Reason = "absorbed: " + m.Absorbed.Layer
		}
		jobs = append(jobs, j)
	}
	if f.gremlins == "" {
		return jobs, nil
	}
	only, err := regexp.Compile(f.toolOnly)
	if err != nil {
		return nil, fmt.Errorf("--tool-only: %v", err)
	}
	gs, err := mutants.ReadGremlins(f.gremlins, f.root)
	if err != nil {
		return nil, fmt.Errorf("--gremlins: %v", err)
	}
	var cover *mutants.Coverage
	if f.cover != "" {
		if cover, err = mutants.ReadCoverage(f.cover); err != nil {
			return nil, fmt.Errorf("--cover: %v", err)
		}
	}
	equivalent := map[string]string{}
	if path := filepath.Join(f.root, f.equivalent); fileExists(path) {
		if equivalent, err = mutants.ReadEquivalent(path); err != nil {
			return nil, fmt.Errorf("--equivalent: %v", err)
		}
	}
	// A fixed order that interleaves the files: a --tool-budget then runs a
	// sample of the whole engine, not its first file.
	sort.SliceStable(gs, func(a, b int) bool { return siteOrder(gs[a].Site) < siteOrder(gs[b].Site) })
	for _, g := range gs {
		if !only.MatchString(g.Site) {
			continue
		}
		j := &mutantJob{mutant: g.Mutant, result: reports.MutantResult{Name: g.Name, Kind: mutants.Gremlins,
			Origin: g.Origin, Description: g.Description}}
		switch reason, ok := equivalent[g.Site]; {
		case ok:
			j.skip, j.result.Status, j.result.Reason = true, reports.MutantEquivalent, reason
		case g.ToolStatus == "NOT COVERED" && !reachedAfterAll(cover, f.root, g):
			j.skip, j.result.Status = true, reports.MutantNotReached
		case g.ToolStatus == "NOT VIABLE":
			j.skip, j.result.Status = true, reports.MutantNotViable
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// reachedAfterAll reports whether the coverage profile shows a mutant the
// tool called not covered was reached after all.
func reachedAfterAll(cover *mutants.Coverage, root string, g mutants.Gremlin) bool {
	if cover == nil || len(g.Edits) != 1 {
		return false
	}
	e := g.Edits[0]
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.File)))
	return err == nil && cover.Reached(e.File, src, e.Line, e.Column)
}

func siteOrder(site string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(site))
	return h.Sum64()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runMutant builds simrun with the mutant's overlay and runs the suite
// against it from each offset.
func runMutant(j *mutantJob, suite scenarios.Suite, offsets []uint64, f mutantsFlags) {
	r := &j.result
	dir, err := os.MkdirTemp("", "simrun-mutant-*")
	if err != nil {
		r.Status, r.Reason = reports.MutantNotViable, oneLine(err.Error())
		return
	}
	defer os.RemoveAll(dir)
	built := time.Now() // determinism-ok: figure
	bin, err := buildOverlaid(j.mutant, f.root, dir)
	r.BuildSeconds = time.Since(built).Seconds() // determinism-ok: figure
	if err != nil {
		r.Status, r.Reason = reports.MutantNotViable, oneLine(err.Error())
		return
	}
	for _, off := range offsets {
		run, hung := runSuiteAgainst(bin, dir, shiftedTasks(suite, off), j.mutant.Catches, f)
		run.Offset = off
		if hung != "" {
			r.Status, r.Reason = reports.MutantTimedOut, hung
			return
		}
		r.Runs = append(r.Runs, run)
	}
	r.Summarize()
	if r.Status == reports.MutantSurvived {
		r.Reason = fmt.Sprintf("%d seeds passed", r.Runs[0].SeedsRun)
	}
	if len(f.huntFlags.modes) > 0 && (r.Kind != mutants.Gremlins || r.Status == reports.MutantSurvived) {
		r.Hunts = huntMutant(bin, dir, j.mutant.Catches, f.huntFlags)
	}
}

// parseHunt checks the --hunt flags.
func (f *mutantsFlags) parseHunt(cmd *cobra.Command) error {
	if f.hunt == "" {
		for _, name := range []string{"hunt-budget", "hunt-starts", "hunt-from", "hunt-branches", "hunt-scenario"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s needs --hunt", name)
			}
		}
		return nil
	}
	h := &f.huntFlags
	switch {
	case h.budget <= 0:
		return fmt.Errorf("--hunt-budget %s: want a positive duration", h.budget)
	case h.starts < 1 || h.starts > 100:
		return fmt.Errorf("--hunt-starts %d: want 1..100", h.starts)
	case h.branches < 1 || h.branches > 1000:
		return fmt.Errorf("--hunt-branches %d: want 1..1000", h.branches)
	}
	if _, ok := scenarios.Lookup(h.scenario); !ok {
		return fmt.Errorf("--hunt-scenario %q: no such scenario (simrun list)", h.scenario)
	}
	from, err := sim.ParseSeed(f.huntFrom)
	if err != nil {
		return fmt.Errorf("--hunt-from: %v", err)
	}
	h.from = from
	if h.modes, err = parseHuntModes(f.hunt, h.branches); err != nil {
		return fmt.Errorf("--hunt: %v", err)
	}
	return nil
}

// buildOverlaid builds simrun from root with the mutant's edits overlaid.
func buildOverlaid(m mutants.Mutant, root, dir string) (string, error) {
	overlay, err := m.Overlay(root, dir)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "simrun")
	build := exec.Command("go", "build", "-overlay", overlay, "-o", bin, "./cmd/simrun")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		// The compiler's first error, not the package header line above it.
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return "", fmt.Errorf("build: %v: %s", err, strings.Join(lines[min(1, len(lines)-1):], " | "))
	}
	return bin, nil
}

// shiftedTasks is the suite's tasks in suite order with every seed moved by
// offset, but pinned regression seeds: those are the point of their case.
func shiftedTasks(suite scenarios.Suite, offset uint64) []task {
	var out []task
	for _, c := range suite.Cases {
		for _, seed := range c.Seeds {
			if c.Finding == "" {
				seed += offset
			}
			out = append(out, task{Index: len(out), Scenario: c.Scenario.Name, Finding: c.Finding, Seed: seed,
				Expect: c.Scenario.ExpectViolation})
		}
	}
	return out
}

// runSuiteAgainst feeds tasks to one worker process of the mutant's simrun
// until a seed fails (with --fail-fast), the tasks end, or the budget is
// spent. hung is set when a seed outlived --seed-timeout.
func runSuiteAgainst(bin, dir string, tasks []task, catches []string, f mutantsFlags) (run reports.MutantKill, hung string) {
	w := exec.Command(bin, "worker", "--out", filepath.Join(dir, "out"))
	w.Env = append(os.Environ(), "GOMAXPROCS=1")
	w.Stderr = io.Discard
	in, err1 := w.StdinPipe()
	stdout, err2 := w.StdoutPipe()
	if err := errors.Join(err1, err2, w.Start()); err != nil {
		return run, "start worker: " + oneLine(err.Error())
	}
	defer func() {
		_ = in.Close()
		_ = w.Process.Kill()
		_ = w.Wait()
	}()
	replies := bufio.NewScanner(stdout)
	replies.Buffer(make([]byte, 1<<20), 64<<20)
	start := time.Now() // determinism-ok: wall time is a reported figure
	for _, t := range tasks {
		if time.Since(start) > f.budget { // determinism-ok: budget
			break
		}
		b, _ := json.Marshal(t)
		if _, err := in.Write(append(b, '\n')); err != nil {
			return run, "worker: " + oneLine(err.Error())
		}
		got := make(chan bool, 1)
		go func() { got <- replies.Scan() }()
		select {
		case ok := <-got:
			if !ok {
				// A mutant that crashes the process fails its seed as surely as a checker.
				run.Seeds++
				run.Killed, run.Checker, run.Case, run.Seed = true, "process crashed", caseName(t), t.Seed
				run.SeedsRun, run.KillSeeds = run.Seeds, run.Seeds
				run.Seconds = time.Since(start).Seconds() // determinism-ok: figure
				return run, ""
			}
		case <-time.After(f.seedWait): // determinism-ok: a wall-clock watchdog outside the simulation
			return run, fmt.Sprintf("%s seed %d ran past %s", caseName(t), t.Seed, f.seedWait)
		}
		run.Seeds++
		var reply workerReply
		if err := json.Unmarshal(replies.Bytes(), &reply); err != nil {
			return run, "worker: bad reply: " + oneLine(err.Error())
		}
		res := reply.Run.Result
		if reply.Error != "" || res.Scenario == "" {
			continue // not a verdict on the mutant (e.g. non-determinism); counted as a seed run
		}
		if passed(res) || res.Verdict == reports.VerdictHarness {
			continue // a harness fault is no verdict on the mutant
		}
		named := ""
		for _, v := range res.Violations {
			if v.Layer == string(checker.LayerEnvironment) {
				continue // the store's broken contract, not the mutant
			}
			for _, c := range catches {
				if v.Checker == c && named == "" {
					named = c
				}
			}
		}
		// The first failure stands until a seed fails with a checker the
		// mutant names: that is the kill its entry promises.
		if !run.Killed || (named != "" && !run.Named) {
			run.Killed, run.Case, run.Seed, run.Checker = true, caseName(t), t.Seed, firstChecker(res)
			run.KillSeeds = run.Seeds
			if named != "" {
				run.Named, run.Checker = true, named
			}
			run.Seconds = time.Since(start).Seconds() // determinism-ok: figure
		}
		if f.failFast && (run.Named || len(catches) == 0) {
			return run, ""
		}
	}
	if !run.Killed {
		run.Seconds = time.Since(start).Seconds() // determinism-ok: figure
	}
	run.SeedsRun, run.Seeds = run.Seeds, run.KillSeeds
	return run, ""
}

func caseName(t task) string {
	if t.Finding != "" {
		return "regression/" + t.Finding
	}
	return t.Scenario
}

// printKillTable prints one line per mutant, then the counts and the score.
func printKillTable(w io.Writer, s *reports.MutantsSummary, out string) {
	fmt.Fprintf(w, "%-38s %-9s %-24s %6s %8s %13s %15s\n", "mutant", "status", "killing checker", "seeds", "seconds",
		"med/p90 seeds", "med/p90 seconds")
	for _, m := range s.Mutants {
		checker := m.Checker
		if checker != "" && !m.Named && m.Kind == "catalog" {
			checker += "*"
		}
		line := fmt.Sprintf("%-38s %-9s %-24s", m.Name, m.Status, checker)
		if m.Status == reports.MutantKilled {
			line += fmt.Sprintf(" %6d %8.1f", m.SeedsToKill, m.SecondsToKill)
			if len(m.Runs) > 1 {
				line += fmt.Sprintf(" %6.0f/%-6.0f %7.1f/%-7.1f", m.MedianSeeds, m.P90Seeds, m.MedianSeconds, m.P90Seconds)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	var counts []string
	for _, st := range []string{reports.MutantKilled, reports.MutantSurvived, reports.MutantNotReached,
		reports.MutantTimedOut, reports.MutantEquivalent, reports.MutantNotViable, reports.MutantNotRun} {
		if n := s.Counts[st]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", st, n))
		}
	}
	score := fmt.Sprintf("score %.1f%% (%s)", 100*s.Score, strings.Join(counts, ", "))
	if len(counts) == 0 {
		score = "no score (deep defects only: they stay out of it)"
	}
	fmt.Fprintf(w, "%s in %.0fs with -j %d; * killed, not by a checker the mutant names; %s\n",
		score, s.WallSeconds, s.Jobs, filepath.Join(out, "mutants.json"))
	printHuntTable(w, s)
}

// printHuntTable prints, per hunted mutant, each mode's median runs and run
// seconds to the first kill, its kills, and the first mode's median seconds
// over its own.
func printHuntTable(w io.Writer, s *reports.MutantsSummary) {
	if len(s.HuntModes) == 0 {
		return
	}
	fmt.Fprintf(w, "\nhunts on %s, %s each: median runs / run seconds to the first kill (kills of hunts), "+
		"and the %s mode's median seconds over each other mode's\n", s.HuntScenario, time.Duration(s.HuntBudget*float64(time.Second)),
		s.HuntModes[0])
	width := len("mutant")
	for _, m := range s.Mutants {
		if len(m.Hunts) > 0 {
			width = max(width, len(m.Name))
		}
	}
	header := fmt.Sprintf("%-*s", width, "mutant")
	for _, m := range s.HuntModes {
		header += fmt.Sprintf(" %-30s", m)
	}
	fmt.Fprintln(w, strings.TrimRight(header, " "))
	for _, m := range s.Mutants {
		if len(m.Hunts) == 0 {
			continue
		}
		line := fmt.Sprintf("%-*s", width, m.Name)
		for i, h := range m.Hunts {
			cell := "none"
			if h.Median {
				cell = fmt.Sprintf("%.0f / %.1fs", h.MedianRuns, h.MedianSeconds)
				if base := m.Hunts[0]; i > 0 && base.Median && h.MedianSeconds > 0 {
					cell += fmt.Sprintf(" %.1fx", base.MedianSeconds/h.MedianSeconds)
				}
			}
			tally := fmt.Sprintf("%d/%d", h.Kills, len(h.Hunts))
			if h.Errors > 0 {
				tally += fmt.Sprintf(", %d could not run", h.Errors)
			}
			line += fmt.Sprintf(" %-30s", fmt.Sprintf("%s (%s)", cell, tally))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}
