package simrun

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// "When did it become inevitable?" A failing seed is branched at moments
// along its run, N branches each with fresh randomness, and the share of
// branches that still fail with the seed's checker is its likelihood at that
// step. The earliest moment from which every later moment's branches all
// fail is where the failure became certain; the fault just before it is the
// one a person looks at first.

// likelihoodFlags are the flags of simrun likelihood.
type likelihoodFlags struct {
	system, scenario, seed, strategy, out string
	moments, branches, jobs               int
}

// Bounds of the flags: enough to draw a curve, few enough to finish.
const (
	maxLikelihoodMoments  = 200
	maxLikelihoodBranches = 1000
	// refineFaults bounds the moments added around faults near the certain
	// step: the last faults before it, each branched just before and at.
	refineFaults = 6
	// refineEven are the moments added when no fault lies in that gap.
	refineEven = 4
	// refineRounds bounds the rounds of refinement, each narrowing the gap.
	refineRounds = 3
	// oddsShown bounds the over-representation table.
	oddsShown = 12
)

func newLikelihoodCmd() *cobra.Command {
	var f likelihoodFlags
	cmd := &cobra.Command{
		Use: "likelihood",
		Short: "Branch a failing seed at moments along its run and show the share of branches that still fail " +
			"with its checker: when the failure became certain, and the fault just before",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return likelihoodCmd(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.system, "system", defaultSystem(), systemUsage())
	fl.StringVar(&f.scenario, "scenario", "", "scenario of the failing seed")
	fl.StringVar(&f.seed, "seed", "", "the failing seed")
	fl.StringVar(&f.strategy, "strategy", "", strategyUsage)
	fl.IntVar(&f.moments, "moments", 20, "steps to branch from, spread from step 0 to the seed's violation")
	fl.IntVarP(&f.branches, "branches", "n", 10, "branches per moment")
	fl.IntVarP(&f.jobs, "jobs", "j", 2, "branches run in parallel, one worker process each")
	fl.StringVar(&f.out, "out", "simrun-out", "the seed's folder goes under it: likelihood.json and report.html "+
		"with the likelihood panel")
	return cmd
}

func likelihoodCmd(cmd *cobra.Command, f likelihoodFlags) error {
	if f.moments < 2 || f.moments > maxLikelihoodMoments {
		return usageErrorf("--moments %d: want 2..%d", f.moments, maxLikelihoodMoments)
	}
	if f.branches < 1 || f.branches > maxLikelihoodBranches {
		return usageErrorf("--branches %d: want 1..%d", f.branches, maxLikelihoodBranches)
	}
	if f.jobs < 1 {
		return usageErrorf("-j %d: want at least 1", f.jobs)
	}
	v, err := parseVariant("", f.strategy)
	if err != nil {
		return usageErrorf("%v", err)
	}
	t, err := resolveTarget(f.system, f.scenario, f.seed, "", v)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := ensureWritableDir(f.out); err != nil {
		return usageErrorf("--out %s: %v", f.out, err)
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	start := time.Now() // determinism-ok: wall time is a reported figure
	o := t.sc.RunTraced(t.seed, nil)
	res := reports.SeedResultOf(reportRun(o), t.sc.ExpectViolation)
	target := reports.FirstChecker(res)
	if len(res.Violations) == 0 && res.Linearizability == "ok" {
		return usageErrorf("%s seed %d%s passes: likelihood explains a failing seed", t.sc.Name, t.seed, v.Flags())
	}
	fmt.Fprintf(stderr, "likelihood: %s seed %d%s fails %s; %d moments x %d branches, %d at a time\n",
		t.sc.Name, t.seed, v.Flags(), target, f.moments, f.branches, f.jobs)

	workers, err := startWorkers(min(f.jobs, f.moments*f.branches), f.out)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	intr := watchInterrupts(stderr, workers)
	defer intr.release()
	base := task{System: o.System, Scenario: t.sc.Name, Seed: t.seed, Expect: t.sc.ExpectViolation,
		Strategy: v.StrategyFlag(), Events: true}
	l := analyseLikelihood(o, target, f.moments, f.branches, poolBranches(intr, workers, base, target, stderr))
	intr.settle(workers)
	l.WallSeconds = time.Since(start).Seconds() // determinism-ok: figure
	if intr.interrupted() {
		l.Stopped = "interrupted by " + intr.signal()
	}

	dir := filepath.Join(f.out, artifactDir(t.sc.Name, t.seed, v))
	res.Artifacts, res.Replay = dir, replayFrom(dir)
	meta := reports.Meta{Replay: res.Replay, Likelihood: &l,
		Note: fmt.Sprintf("with the likelihood of its failure from %d moments x %d branches", len(l.Moments), f.branches)}
	if err := writeArtifacts(dir, t.sc, o, res, meta); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	jsonFile := filepath.Join(dir, "likelihood.json")
	if err := reports.WriteFileAtomic(jsonFile, func(w io.Writer) error { return writeJSON(w, l) }); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	printLikelihood(stdout, l)
	fmt.Fprintf(stdout, "report: %s\njson:   %s\n", filepath.Join(dir, "report.html"), jsonFile)
	switch {
	case intr.interrupted():
		if intr.signal() == "SIGINT" {
			return exitWith(reports.ExitInterruptedSIGINT)
		}
		return exitWith(reports.ExitInterruptedSIGTERM)
	case l.NotRun > 0:
		return exitWith(reports.ExitIncomplete)
	}
	return nil
}

// branchOutcome is one branch's answer: whether it failed with the seed's
// checker, and the events it drew itself (after its step).
type branchOutcome struct {
	Step   uint64
	N      int
	Failed bool
	Events []string
	// Err is a harness error; Missing a branch that never ran (an interrupt).
	Err     error
	Missing bool
}

// branchRunner runs n branches from each step and returns every outcome.
type branchRunner func(steps []uint64, n int) []branchOutcome

// poolBranches runs branches on the workers, as run runs seeds.
func poolBranches(intr *interrupts, workers []worker, base task, target string, log io.Writer) branchRunner {
	return func(steps []uint64, n int) []branchOutcome {
		var tasks []task
		for _, s := range steps {
			for b := 1; b <= n; b++ {
				t := base
				t.Index = len(tasks)
				t.Branch = sim.Branch{Step: s, N: uint64(b)}.String()
				tasks = append(tasks, t)
			}
		}
		got := make([]*outcome, len(tasks))
		prog := newProgress(log, len(tasks), "branches")
		runPool(intr.ctx, intr.abandon, workers, tasks, func(o outcome) {
			got[o.task.Index] = &o
			if o.err != nil && !intr.interrupted() {
				prog.fail(o.err.Error())
			}
			// The bar's "failed" counts branches that fail with the seed's checker.
			prog.done(o.err == nil && !hasFinding(o.run.Result, target))
		})
		prog.finish()
		out := make([]branchOutcome, len(tasks))
		for i, t := range tasks {
			out[i] = branchOutcome{Step: steps[i/n], N: i%n + 1}
			switch o := got[i]; {
			case o == nil:
				out[i].Missing = true
			case o.err != nil:
				out[i].Err = fmt.Errorf("branch %s: %w", t.Branch, o.err)
			default:
				out[i].Failed = hasFinding(o.run.Result, target)
				out[i].Events = o.run.Events
			}
		}
		return out
	}
}

// hasFinding reports whether a run's findings include target, a checker or
// FirstChecker's "linearizability <outcome>".
func hasFinding(r reports.SeedResult, target string) bool {
	if target == "linearizability "+r.Linearizability {
		return true
	}
	for _, v := range r.Violations {
		if v.Checker == target {
			return true
		}
	}
	return false
}

func eventsOf(o *scenarios.Outcome) []event {
	var out []event
	eachEvent(o, func(e event) { out = append(out, e) })
	sort.SliceStable(out, func(i, j int) bool { return out[i].step < out[j].step })
	return out
}

// eventKeysAfter are the distinct keys of the run's events after step: what
// a branch from step drew itself.
func eventKeysAfter(o *scenarios.Outcome, step uint64) []string {
	seen := map[string]bool{}
	var out []string
	eachEvent(o, func(e event) {
		if e.step > step && !seen[e.key] {
			seen[e.key] = true
			out = append(out, e.key)
		}
	})
	sort.Strings(out)
	return out
}

// analyseLikelihood branches the seed's run o at moments and reads the
// curve: first evenly from step 0 to the seed's own finding of target, then,
// when some moment is certain and the one before it is not, again in the gap
// between the two (around its faults first), a few rounds, so that the
// certain step lands near what made it so.
func analyseLikelihood(o *scenarios.Outcome, target string, moments, n int, run branchRunner) reports.Likelihood {
	evs := eventsOf(o)
	l := reports.Likelihood{System: o.System, Scenario: o.Scenario, Seed: o.Seed, Strategy: o.Variant.StrategyFlag(),
		Checker: target, Steps: o.Steps, Branches: n}
	l.ViolationStep, l.Job = firstFinding(o, target)
	for _, e := range evs {
		if strings.HasPrefix(e.key, "fault ") {
			l.Faults = append(l.Faults, reports.LikelihoodEvent{Step: e.step, Time: e.time, Key: e.key, Job: e.job})
		}
	}
	end := l.ViolationStep
	if end == 0 && len(evs) > 0 {
		end = evs[len(evs)-1].step // nothing later can have decided it
	}
	if end == 0 || end > o.Steps {
		end = o.Steps
	}
	at := stepClock(o, evs)
	coarse := evenSteps(end, moments)
	outs := run(coarse, n)
	l.Moments = tally(o, at, coarse, n, outs, false, target)
	for range refineRounds {
		extra := refineSteps(l)
		if len(extra) == 0 {
			break
		}
		more := run(extra, n)
		outs = append(outs, more...)
		l.Moments = append(l.Moments, tally(o, at, extra, n, more, true, target)...)
		sort.Slice(l.Moments, func(i, j int) bool { return l.Moments[i].Step < l.Moments[j].Step })
	}
	l.Certain, l.CertainStep = certainFrom(l.Moments, n)
	if l.Certain {
		for _, e := range evs {
			if e.step > l.CertainStep {
				break
			}
			ev := &reports.LikelihoodEvent{Step: e.step, Time: e.time, Key: e.key, Job: e.job}
			l.EventBefore = ev
			onJob := l.Job != "" && e.job == l.Job
			if onJob {
				l.JobEventBefore = ev
			}
			if strings.HasPrefix(e.key, "fault ") {
				l.FaultBefore = ev
				if onJob {
					l.JobFaultBefore = ev
				}
			}
		}
		// A client's cancel of the job is an event of its story too.
		for _, op := range o.Run.History.Ops {
			if op.Kind == history.OpCancel && op.Key == l.Job && l.Job != "" && op.CallStep <= l.CertainStep &&
				(l.JobEventBefore == nil || op.CallStep > l.JobEventBefore.Step) {
				l.JobEventBefore = &reports.LikelihoodEvent{Step: op.CallStep, Time: op.Call,
					Key: "client cancel of " + op.Key, Job: op.Key}
			}
		}
	}
	for _, b := range outs {
		if b.Missing || b.Err != nil {
			l.NotRun++
		}
	}
	l.Overrepresented, l.ComparedFailing, l.ComparedPassing = overrepresented(l.Moments, outs)
	return l
}

// firstFinding is the step and job of the seed's first finding of target
// (step 0: none has a step).
func firstFinding(o *scenarios.Outcome, target string) (uint64, string) {
	var step uint64
	job := ""
	for _, v := range o.Result.Violations {
		if v.Checker != target {
			continue
		}
		if job == "" {
			job = v.Job
		}
		if v.Step > 0 && (step == 0 || v.Step < step) {
			step, job = v.Step, v.Job
		}
	}
	return step, job
}

// evenSteps are n distinct steps spread from 0 to end, both included.
func evenSteps(end uint64, n int) []uint64 {
	var out []uint64
	for i := range n {
		s := end * uint64(i) / uint64(n-1)
		if len(out) == 0 || s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}

// tally turns a run of branches into its moments.
func tally(o *scenarios.Outcome, at func(uint64) time.Duration, steps []uint64, n int, outs []branchOutcome,
	refined bool, target string) []reports.LikelihoodMoment {
	ms := make([]reports.LikelihoodMoment, len(steps))
	for i, s := range steps {
		ms[i] = reports.LikelihoodMoment{Step: s, Time: at(s), Refined: refined}
	}
	for _, b := range outs {
		i := sort.Search(len(steps), func(i int) bool { return steps[i] >= b.Step })
		m := &ms[i]
		switch {
		case b.Missing:
			continue
		case b.Err != nil:
			m.Errors++
			continue
		}
		m.Runs++
		line := replaySeed(o.System, o.Scenario, o.Seed, scenarios.Variant{
			Branch: sim.Branch{Step: b.Step, N: uint64(b.N)}, Strategy: o.Variant.Strategy,
			StrategySwarm: o.Variant.StrategySwarm})
		if b.Failed {
			m.Failing++
			if m.FailReplay == "" {
				m.FailReplay = line
			}
		} else if m.PassReplay == "" {
			m.PassReplay = line
		}
	}
	return ms
}

// stepClock tells the virtual time at a step of the seed's run: from its
// trace lines ("step=N t=S.SSSs ...") when the run kept them, else from the
// last fault or transition at or before the step.
func stepClock(o *scenarios.Outcome, evs []event) func(uint64) time.Duration {
	type mark struct {
		step uint64
		t    time.Duration
	}
	var marks []mark
	if o.World != nil {
		for line := range bytes.Lines(o.World.Trace().Bytes()) {
			var step uint64
			var secs float64
			if _, err := fmt.Sscanf(string(line), "step=%d t=%fs", &step, &secs); err != nil {
				continue
			}
			if len(marks) == 0 || marks[len(marks)-1].step != step {
				marks = append(marks, mark{step, time.Duration(secs * float64(time.Second))})
			}
		}
	}
	if len(marks) == 0 {
		for _, e := range evs {
			marks = append(marks, mark{e.step, e.time})
		}
	}
	return func(step uint64) time.Duration {
		i := sort.Search(len(marks), func(i int) bool { return marks[i].step > step })
		if i == 0 {
			return 0
		}
		return marks[i-1].t
	}
}

// certainFrom finds the earliest moment from which every moment's branches
// all ran and all failed.
func certainFrom(ms []reports.LikelihoodMoment, n int) (bool, uint64) {
	certain, step := false, uint64(0)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Runs < n || m.Failing < m.Runs {
			break
		}
		certain, step = true, m.Step
	}
	return certain, step
}

// refineSteps are the moments to add between the last uncertain moment and
// the first certain one: just before and at each of the last faults there
// not yet branched from, or, with none, a few steps spread over the gap.
func refineSteps(l reports.Likelihood) []uint64 {
	certain, at := certainFrom(l.Moments, l.Branches)
	i := sort.Search(len(l.Moments), func(i int) bool { return l.Moments[i].Step >= at })
	if !certain || i == 0 {
		return nil
	}
	lo, hi := l.Moments[i-1].Step, at
	have := map[uint64]bool{}
	for _, m := range l.Moments {
		have[m.Step] = true
	}
	var out []uint64
	add := func(s uint64) {
		if s > lo && s < hi && !have[s] {
			have[s] = true
			out = append(out, s)
		}
	}
	var faults []uint64
	for _, f := range l.Faults {
		if f.Step > lo && f.Step <= hi && (!have[f.Step-1] || !have[f.Step]) {
			faults = append(faults, f.Step)
		}
	}
	if len(faults) > refineFaults {
		faults = faults[len(faults)-refineFaults:]
	}
	for _, s := range faults {
		add(s - 1)
		add(s)
	}
	if len(out) == 0 {
		for k := 1; k <= refineEven; k++ {
			add(lo + (hi-lo)*uint64(k)/uint64(refineEven+1))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// overrepresented compares the events failing and passing branches drew,
// over the moments whose branches went both ways (same prefix, different
// futures, so what differs is what the branches drew): by the ratio of the
// shares of failing and passing branches that had each event, add-half
// smoothed so that an event no passing branch had ranks without dividing by
// zero.
func overrepresented(ms []reports.LikelihoodMoment, outs []branchOutcome) ([]reports.EventOdds, int, int) {
	mixed := map[uint64]bool{}
	for _, m := range ms {
		if m.Failing > 0 && m.Failing < m.Runs {
			mixed[m.Step] = true
		}
	}
	fail, pass := map[string]int{}, map[string]int{}
	var F, P int
	for _, b := range outs {
		if !mixed[b.Step] || b.Missing || b.Err != nil {
			continue
		}
		count := pass
		if b.Failed {
			count = fail
			F++
		} else {
			P++
		}
		for _, k := range b.Events {
			count[k]++
		}
	}
	if F == 0 || P == 0 {
		return nil, F, P
	}
	var odds []reports.EventOdds
	for k, f := range fail {
		r := ((float64(f) + 0.5) / float64(F+1)) / ((float64(pass[k]) + 0.5) / float64(P+1))
		if r > 1 && f > 1 {
			odds = append(odds, reports.EventOdds{Key: k, Failing: f, Passing: pass[k], Ratio: r})
		}
	}
	sort.Slice(odds, func(i, j int) bool {
		if odds[i].Ratio != odds[j].Ratio {
			return odds[i].Ratio > odds[j].Ratio
		}
		return odds[i].Key < odds[j].Key
	})
	if len(odds) > oddsShown {
		odds = odds[:oddsShown]
	}
	return odds, F, P
}

// printLikelihood tells the curve on a terminal: one line per moment with a
// bar and a line that replays one of its branches, then the verdict.
func printLikelihood(w io.Writer, l reports.Likelihood) {
	fmt.Fprintf(w, "likelihood of %s seed %d failing %s (a branch fails when %s fires, as in the seed)\n",
		l.Scenario, l.Seed, l.Checker, l.Checker)
	fmt.Fprintf(w, "%8s %10s %7s %5s  %-20s %s\n", "step", "time", "fail", "share", "", "replay (a failing branch, else a passing one)")
	for _, m := range l.Moments {
		bar := strings.Repeat("#", int(20*m.Share()+0.5))
		mark := " "
		if m.Refined {
			mark = "*"
		}
		replay := m.FailReplay
		if replay == "" {
			replay = m.PassReplay
		}
		fails := fmt.Sprintf("%d/%d", m.Failing, m.Runs)
		if m.Errors > 0 {
			fails += fmt.Sprintf(" (%d errors)", m.Errors)
		}
		fmt.Fprintf(w, "%7d%s %10s %7s %4.0f%%  %-20s %s\n", m.Step, mark, m.Time.Round(time.Millisecond), fails,
			100*m.Share(), bar, replay)
	}
	if l.NotRun > 0 {
		why := ""
		if l.Stopped != "" {
			why = " (" + l.Stopped + ")"
		}
		fmt.Fprintf(w, "%d planned branches did not run%s: a moment missing any is not certain\n", l.NotRun, why)
	}
	switch {
	case l.Certain:
		fmt.Fprintf(w, "certain from step %d: every branch from there on fails %s\n", l.CertainStep, l.Checker)
		switch f := l.FaultBefore; {
		case f != nil:
			fmt.Fprintf(w, "  the fault just before: step %d (%s) %s\n", f.Step, f.Time.Round(time.Millisecond), f.Key)
		case len(l.Moments) > 0 && l.CertainStep == l.Moments[0].Step:
			fmt.Fprintf(w, "  from the start, whatever a branch draws: the seed's options make it all but certain\n")
		default:
			fmt.Fprintf(w, "  no fault fired by then: the schedule alone made it certain\n")
		}
		if f := l.JobFaultBefore; f != nil && *f != *l.FaultBefore {
			fmt.Fprintf(w, "  the last fault on %s, the violation's job, before it: step %d (%s) %s\n", l.Job, f.Step,
				f.Time.Round(time.Millisecond), f.Key)
		}
		if e := l.JobEventBefore; e != nil && (l.JobFaultBefore == nil || *e != *l.JobFaultBefore) {
			fmt.Fprintf(w, "  the last event on %s before it: step %d (%s) %s\n", l.Job, e.Step, e.Time.Round(time.Millisecond),
				e.Key)
		}
		if e := l.EventBefore; e != nil && (l.FaultBefore == nil || *e != *l.FaultBefore) &&
			(l.JobEventBefore == nil || *e != *l.JobEventBefore) {
			fmt.Fprintf(w, "  the last event before: step %d %s\n", e.Step, e.Key)
		}
	case l.NotRun > 0:
		fmt.Fprintf(w, "not certain at any moment that ran in full: an unrun branch might have avoided %s\n", l.Checker)
	default:
		fmt.Fprintf(w, "never certain: at every moment some branch avoids %s\n", l.Checker)
	}
	if len(l.Overrepresented) > 0 {
		fmt.Fprintf(w, "over-represented in failing branches (of %d failing, %d passing, from moments that went both ways):\n",
			l.ComparedFailing, l.ComparedPassing)
		for _, o := range l.Overrepresented {
			fmt.Fprintf(w, "  %5.1fx  %3d failing %3d passing  %s\n", o.Ratio, o.Failing, o.Passing, o.Key)
		}
	}
	fmt.Fprintf(w, "%d moments x %d branches in %.1fs\n", len(l.Moments), l.Branches, l.WallSeconds)
}
