package simrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// rareAmbiguousPublish is ambiguous-publish-no-dedup with the ambiguous
// publish made rare (1 in 100 publishes): its seed 13 fires it once, at step
// 420, and fails exactly_once_publish because of it. Without that fault
// nothing can publish a job twice, so the fault is the seed's defining one.
func rareAmbiguousPublish(t *testing.T) scenarios.Scenario {
	t.Helper()
	sc, ok := scenarios.Lookup("ambiguous-publish-no-dedup")
	require.True(t, ok)
	sc.Options = func(o faults.Options) faults.Options {
		ko := o.Kinds[faults.PublishFailsAfterStored.Name]
		ko.Probability = 0.01
		return o.Enable(faults.PublishFailsAfterStored, ko)
	}
	sc.ExpectViolation = ""
	return sc.On(cordum.System{})
}

// inProcessBranches runs branches of sc's seed in this process.
func inProcessBranches(sc scenarios.Scenario, seed uint64, target string) branchRunner {
	return func(steps []uint64, n int) []branchOutcome {
		var out []branchOutcome
		for _, s := range steps {
			for b := 1; b <= n; b++ {
				o := sc.With(scenarios.Variant{Branch: sim.Branch{Step: s, N: uint64(b)}}).Run(seed)
				res := reports.SeedResultOf(reportRun(o), "")
				out = append(out, branchOutcome{Step: s, N: b, Failed: hasFinding(res, target),
					Events: eventKeysAfter(o, s)})
			}
		}
		return out
	}
}

// The curve of a seed whose defining fault is known: below 1 before the
// fault, 1 from the certain step on, which is at or after the fault, and the
// fault named just before it is that fault.
func TestLikelihoodNamesTheDefiningFault(t *testing.T) {
	require.NoError(t, register([]sut.System{cordum.System{}}))
	sc := rareAmbiguousPublish(t)
	const seed = 13
	o := sc.Run(seed)
	res := reports.SeedResultOf(reportRun(o), "")
	target := reports.FirstChecker(res)
	require.Equal(t, "exactly_once_publish", target)
	require.Len(t, o.Run.History.Faults, 1, "one fault fired")
	fault := o.Run.History.Faults[0]
	require.Equal(t, faults.PublishFailsAfterStored.Name, fault.Kind)

	const n = 4
	l := analyseLikelihood(o, target, 6, n, inProcessBranches(sc, seed, target))
	var tbl bytes.Buffer
	printLikelihood(&tbl, l)
	t.Log(tbl.String())
	require.True(t, l.Certain, "%+v", l.Moments)
	require.GreaterOrEqual(t, l.CertainStep, fault.Step, "certain only once the fault fired")
	require.LessOrEqual(t, l.CertainStep, l.ViolationStep)
	require.NotNil(t, l.FaultBefore)
	require.Equal(t, fault.Step, l.FaultBefore.Step)
	require.Contains(t, l.FaultBefore.Key, "fault "+faults.PublishFailsAfterStored.Name+" at publish")
	require.Equal(t, "j-21", l.Job, "the job published twice")
	require.Equal(t, l.FaultBefore, l.JobFaultBefore, "the fault was on that job")
	before, refined := 0, 0
	for _, m := range l.Moments {
		require.Equal(t, n, m.Runs)
		if m.Refined {
			refined++
		}
		switch {
		case m.Step < fault.Step:
			before++
			require.Less(t, m.Share(), 1.0, "step %d, before the fault: a branch can avoid it", m.Step)
		case m.Step >= l.CertainStep:
			require.Equal(t, 1.0, m.Share(), "step %d, after the certain step", m.Step)
		}
	}
	require.GreaterOrEqual(t, before, 2)
	share := map[uint64]float64{}
	for _, m := range l.Moments {
		share[m.Step] = m.Share()
	}
	require.Contains(t, share, fault.Step-1, "branched just before the fault")
	require.Contains(t, share, fault.Step, "and just after")
	require.Less(t, share[fault.Step-1], share[fault.Step], "the curve rises at the fault")
	require.Positive(t, refined, "moments added around the fault")
	require.Equal(t, 0, l.NotRun)
	for _, odd := range l.Overrepresented {
		require.Greater(t, odd.Ratio, 1.0)
	}

	var page bytes.Buffer
	require.NoError(t, reports.NewSeedReport(reportRun(o), "", reports.Meta{Likelihood: &l}).WriteHTML(&page))
	if dump := os.Getenv("LIKELIHOOD_PAGE"); dump != "" {
		require.NoError(t, os.WriteFile(dump, page.Bytes(), 0o644))
	}
	for _, want := range []string{`id="likelihood"`, "Certain from step", `class="fmark key"`, "PublishFailsAfterStored"} {
		require.Contains(t, page.String(), want)
	}
}

// Evenly spread moments, the certain moment and the refinement between the
// last uncertain moment and the first certain one.
func TestLikelihoodMoments(t *testing.T) {
	require.Equal(t, []uint64{0, 50, 100}, evenSteps(100, 3))
	require.Equal(t, []uint64{0, 1, 2}, evenSteps(2, 5), "no step twice")

	ms := []reports.LikelihoodMoment{{Step: 0, Runs: 4, Failing: 1}, {Step: 50, Runs: 4, Failing: 4},
		{Step: 60, Runs: 4, Failing: 3}, {Step: 80, Runs: 4, Failing: 4}, {Step: 100, Runs: 4, Failing: 4}}
	certain, at := certainFrom(ms, 4)
	require.True(t, certain)
	require.Equal(t, uint64(80), at, "a later moment that went both ways undoes an earlier all-fail")
	ms[4].Runs, ms[4].Failing = 3, 3
	certain, _ = certainFrom(ms, 4)
	require.False(t, certain, "a moment with a branch missing is never certain")

	l := reports.Likelihood{Branches: 2, Moments: []reports.LikelihoodMoment{{Step: 0, Runs: 2, Failing: 0},
		{Step: 100, Runs: 2, Failing: 1}, {Step: 200, Runs: 2, Failing: 2}},
		Faults: []reports.LikelihoodEvent{{Step: 90}, {Step: 150}, {Step: 170}}}
	require.Equal(t, []uint64{149, 150, 169, 170}, refineSteps(l))
	l.Faults = l.Faults[:1]
	require.Equal(t, []uint64{120, 140, 160, 180}, refineSteps(l), "no fault in the gap: spread over it")
}

// The command end to end: the table with a replay line per moment, the
// json and the report's panel; bad input is one line and exit 2.
func TestLikelihoodCommand(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"likelihood", "--scenario", "ambiguous-publish-no-dedup", "--seed", "6100", "--moments", "3",
		"-n", "2", "-j", "1", "--out", out}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "failing exactly_once_publish")
	require.Contains(t, stdout.String(), "simrun replay --scenario ambiguous-publish-no-dedup --seed 6100 --branch 0/1")
	dir := filepath.Join(out, "ambiguous-publish-no-dedup", "6100")
	b, err := os.ReadFile(filepath.Join(dir, "likelihood.json"))
	require.NoError(t, err)
	var l reports.Likelihood
	require.NoError(t, json.Unmarshal(b, &l))
	require.Equal(t, "exactly_once_publish", l.Checker)
	require.Len(t, l.Moments, 3)
	require.Positive(t, l.Moments[2].Time, "virtual time at the step, from the seed's trace")
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), `id="likelihood"`)

	// Any other report of a failing seed offers the line that adds the panel.
	sc, _ := scenarios.Lookup("ambiguous-publish-no-dedup")
	sc = sc.On(cordum.System{})
	o := sc.RunTraced(6101, nil)
	other := filepath.Join(out, "other")
	require.NoError(t, writeArtifacts(other, sc, o, reports.SeedResultOf(reportRun(o), sc.ExpectViolation), reports.Meta{}))
	page, err = os.ReadFile(filepath.Join(other, "report.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), "simrun likelihood --scenario ambiguous-publish-no-dedup --seed 6101")

	for _, bad := range [][]string{
		{"likelihood", "--scenario", "nope", "--seed", "1"},
		{"likelihood", "--scenario", "ambiguous-publish-no-dedup"},
		{"likelihood", "--scenario", "ambiguous-publish-no-dedup", "--seed", "6100", "--moments", "1"},
		{"likelihood", "--scenario", "ambiguous-publish-no-dedup", "--seed", "6100", "-n", "0"},
		{"likelihood", "--scenario", "dispatch-rollback", "--seed", "1000", "--out", out},
	} {
		stdout.Reset()
		stderr.Reset()
		code := run(bad, nil, &stdout, &stderr)
		require.Equal(t, exitUsage, code, "%v: %s", bad, stderr.String())
		require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "%v: %s", bad, stderr.String())
	}
}

// A branch that never ran (an interrupt) or ran into an error leaves its
// moment short, and a short moment is never certain, however its other
// branches ended.
func TestLikelihoodUnrunBranchesAreNeverCertain(t *testing.T) {
	require.NoError(t, register([]sut.System{cordum.System{}}))
	o := &scenarios.Outcome{System: "cordum", Scenario: "s", Seed: 1, Steps: 100,
		Result: &checker.Result{Violations: []checker.Violation{{Checker: "c", Step: 90, Job: "j-1"}}},
		Run:    &sim.Result{History: &history.History{}}}
	allFail := func(lose func(i int) branchOutcome) branchRunner {
		return func(steps []uint64, n int) []branchOutcome {
			var out []branchOutcome
			for _, s := range steps {
				for b := 1; b <= n; b++ {
					bo := branchOutcome{Step: s, N: b, Failed: true}
					if s == steps[len(steps)-1] && b == n {
						bo = lose(b)
						bo.Step, bo.N = s, b
					}
					out = append(out, bo)
				}
			}
			return out
		}
	}
	l := analyseLikelihood(o, "c", 4, 3, allFail(func(int) branchOutcome { return branchOutcome{Failed: true} }))
	require.True(t, l.Certain)
	require.Equal(t, uint64(0), l.CertainStep, "every branch fails from the start")
	require.Equal(t, uint64(90), l.ViolationStep)
	require.Equal(t, "j-1", l.Job)

	l = analyseLikelihood(o, "c", 4, 3, allFail(func(int) branchOutcome { return branchOutcome{Missing: true} }))
	require.False(t, l.Certain, "the last moment is short a branch")
	require.Equal(t, 1, l.NotRun)
	require.Equal(t, 2, l.Moments[len(l.Moments)-1].Runs)

	l = analyseLikelihood(o, "c", 4, 3, allFail(func(int) branchOutcome {
		return branchOutcome{Err: errors.New("worker died")}
	}))
	require.False(t, l.Certain)
	require.Equal(t, 1, l.Moments[len(l.Moments)-1].Errors)
}
