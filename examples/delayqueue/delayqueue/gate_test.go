package delayqueue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dispatchsim/dispatchsim/adaptercheck"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/simrun"
	"github.com/dispatchsim/dispatchsim/sut"
)

// run plays one seed of a release scenario against sys.
func run(t *testing.T, sys sut.System, scenario string, seed uint64) *scenarios.Outcome {
	t.Helper()
	sc, ok := scenarios.Lookup(scenario)
	if !ok {
		t.Fatalf("no scenario %q", scenario)
	}
	return sc.On(sys).Run(seed)
}

func checkers(o *scenarios.Outcome) []string {
	var out []string
	for _, v := range o.Result.Violations {
		out = append(out, v.Checker+": "+v.Message)
	}
	return out
}

// The correct queue passes scenarios that reach each of its branches: lost
// and duplicated results, late results racing the reaper, cancels, a topic
// without a pool, ambiguous publishes, a store outage, crashes and a
// rolling deploy.
func TestCorrectQueuePasses(t *testing.T) {
	cases := []struct {
		scenario string
		seeds    []uint64
	}{
		{"terminal-resurrection", []uint64{4000, 4001}},
		{"reconciler-vs-late-result", []uint64{7000}},
		{"topic-timeouts", []uint64{7100}},
		{"cancels", []uint64{4600}},
		{"no-pool-mapping-static", []uint64{3100}},
		{"ambiguous-publish-dedup", []uint64{6000}},
		{"store-outage", []uint64{8000}},
		{"worker-failures", []uint64{8500}},
		{"rolling-deploy", []uint64{8700}},
		{"swarm", []uint64{9000}},
		// Jobs of 70-150s once outlived the 60s default lease on every
		// attempt and timed out (job_succeeded); the default is now 5m.
		{"long-jobs", []uint64{1200}},
		// Found a cancel landing between a claim and its slow publish: the
		// job ran after it was CANCELLED (terminal_job_executed_again).
		{"world-swarm", []uint64{300196}},
		// 301566: a lease judged on a replica clock ahead of the claimer's
		// ended while the claim's publish stalled; the job failed, then the
		// dispatch went out (terminal_job_executed_again). 301766: a job
		// that had run failed with no_workers 24s after it was first
		// dispatched, its grace counted from its submit (grace_not_early).
		{"world-swarm", []uint64{301566, 301766}},
	}
	for _, c := range cases {
		for _, seed := range c.seeds {
			o := run(t, System{}, c.scenario, seed)
			if o.Violated() {
				t.Errorf("%s seed %d: %s\n%s", c.scenario, seed, o.ReplayLine(), strings.Join(checkers(o), "\n"))
			}
		}
	}
}

// cancelsDuringSlowPublishes is a scenario of the queue's own, made of the
// catalog's kinds: half the jobs are cancelled while publishes stall for up
// to 3s, so cancels land between a claim and its publish. Before a cancel of
// a DISPATCHED job waited for its dispatch to end, 7 of these 20 seeds ran a
// job after it was CANCELLED.
var cancelsDuringSlowPublishes = scenarios.Scenario{
	Name:        "cancels-during-slow-publishes",
	Description: "half the jobs cancelled while dispatch publishes stall: none may run once CANCELLED",
	Faults:      []faults.Kind{faults.PublishLatency},
	Options: func(o faults.Options) faults.Options {
		return o.Enable(faults.PublishLatency, faults.KindOptions{Probability: 0.5, DurationMsMin: 100, DurationMsMax: 3000})
	},
	World: scenarios.World{Workload: &sim.Workload{Jobs: 30, StatusReads: 5, CancelRate: 0.5}},
	Seeds: scenarios.SeedRange{First: 1, Count: 20},
}

func TestCancelsDuringSlowPublishes(t *testing.T) {
	for _, seed := range cancelsDuringSlowPublishes.Seeds.Seeds() {
		if o := cancelsDuringSlowPublishes.On(System{}).Run(seed); o.Violated() {
			t.Errorf("seed %d: %s", seed, strings.Join(checkers(o), "\n"))
		}
	}
}

// caught runs seeds of a scenario against a defect until one is caught by
// the named checker, and fails if none is within the seeds.
func caught(t *testing.T, d Defect, scenario, checker string, first uint64, n int) {
	t.Helper()
	for seed := first; seed < first+uint64(n); seed++ {
		o := run(t, System{Defect: d}, scenario, seed)
		if o.HasViolation(checker) {
			t.Logf("%s caught by %s on %s", o.System, checker, o.ReplayLine())
			return
		}
	}
	t.Fatalf("%s: no seed of %s %d..%d failed %s", System{Defect: d}.Name(), scenario, first, first+uint64(n)-1, checker)
}

// Defect 1: a dispatch published before its claim is written goes out again
// when the claim fails or another replica claims the job too; with no
// de-duplication downstream the broker stores it twice.
func TestPublishBeforeWriteIsCaught(t *testing.T) {
	caught(t, PublishBeforeWrite, "dispatch-rollback", "exactly_once_publish", 1000, 3)
}

// Defect 2: a result applied to a terminal job (a duplicate, a retryable
// failure after success, a result after a cancel) moves it out of its
// terminal state.
func TestTerminalOverwriteIsCaught(t *testing.T) {
	caught(t, TerminalOverwrite, "terminal-resurrection", "no_resurrection", 4000, 3)
}

// Defect 3: a result of an earlier dispatch applied to the current one. In
// topic-timeouts jobs outlive their 20s lease, are put back and dispatched
// again, and the first execution's result arrives while the second runs.
// The store then records a result pointer of another dispatch than the
// job's current one (the ground truth the test checks the defect reached),
// and result_of_current_dispatch must name that job.
func TestStaleResultAppliedIsCaught(t *testing.T) {
	var stale []string
	for seed := uint64(7100); seed < 7103; seed++ {
		o := run(t, System{Defect: StaleResultApplied}, "topic-timeouts", seed)
		reached := map[string]bool{}
		for id, j := range o.Run.Final {
			if j.State == o.World.Spec().Succeeded && j.ResultPtr != resultPtr(j.DispatchID) {
				reached[id] = true
				stale = append(stale, fmt.Sprintf("%s of seed %d", id, seed))
			}
		}
		for _, v := range o.Result.Violations {
			if reached[v.Job] && v.Checker == "result_of_current_dispatch" {
				t.Logf("%s caught by %s on %s", o.System, v.Checker, o.ReplayLine())
				return
			}
		}
	}
	sort.Strings(stale)
	if len(stale) == 0 {
		t.Fatal("the defect was never reached: no job ended with another dispatch's result")
	}
	t.Fatalf("%d jobs ended SUCCEEDED with the result of an earlier dispatch (%s) and result_of_current_dispatch "+
		"flagged none of them", len(stale), strings.Join(stale, ", "))
}

// The correct queue never ends a job with another dispatch's result.
func TestCorrectQueueKeepsEachResultWithItsDispatch(t *testing.T) {
	o := run(t, System{}, "topic-timeouts", 7100)
	for id, j := range o.Run.Final {
		if j.State == o.World.Spec().Succeeded && j.ResultPtr != resultPtr(j.DispatchID) {
			t.Errorf("%s ended with %s, its dispatch is %s", id, j.ResultPtr, j.DispatchID)
		}
	}
}

// One seed run twice gives the same checksum: the queue draws nothing from
// the wall clock, global randomness or the Go scheduler.
func TestDeterministic(t *testing.T) {
	for _, d := range []Defect{"", PublishBeforeWrite} {
		a, b := run(t, System{Defect: d}, "swarm", 9001), run(t, System{Defect: d}, "swarm", 9001)
		if a.Checksum != b.Checksum || a.Steps != b.Steps {
			t.Fatalf("%s: checksums %x and %x, steps %d and %d", a.System, a.Checksum, b.Checksum, a.Steps, b.Steps)
		}
	}
}

// The command line runs in-process with the system registered (-j 1: more
// would re-execute the test binary as workers).
func TestCommandLine(t *testing.T) {
	var out, errs bytes.Buffer
	code := simrun.Run([]string{"run", "--scenario", "cancels", "--seed", "4600", "-j", "1", "--out", t.TempDir()},
		nil, &out, &errs, System{}, System{Defect: TerminalOverwrite})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errs.String())
	}
	code = simrun.Run([]string{"run", "--system", "delayqueue-terminal-overwrite", "--scenario", "terminal-resurrection",
		"--seed", "4000", "-j", "1", "--out", t.TempDir()}, nil, &out, &errs, System{}, System{Defect: TerminalOverwrite})
	if code != 1 {
		t.Fatalf("the planted defect: exit %d, want 1 (safety)\n%s%s", code, out.String(), errs.String())
	}
}

// Defect 4: a job's record kept only a minute after it ends, while the
// spec promises a submit is never made a job again: a client's late retry
// makes it again (submit_dedup).
func TestTerminalRecordExpiresIsCaught(t *testing.T) {
	caught(t, TerminalRecordExpires, "submit-retries", "submit_dedup", 9300, 8)
}

// check names the declaration the short retention breaks: the spec's
// submit de-duplication window.
func TestCheckNamesTheSubmitWindowTheRetentionBreaks(t *testing.T) {
	rep := adaptercheck.Check(System{Defect: TerminalRecordExpires})
	if !rep.Failed() || !strings.Contains(rep.String(), "Spec.SubmitDedupWindow promises they never do") {
		t.Fatalf("check does not name the window:\n%s", rep)
	}
	if rep := adaptercheck.Check(System{}); rep.Failed() {
		t.Fatalf("the correct queue fails check:\n%s", rep)
	}
}

// The release gate through the command line, as CI runs it: the correct
// queue passes (exit 0), and each planted defect fails it (exit 1) with the
// checker that names the defect among its failure groups.
func TestReleaseGate(t *testing.T) {
	if testing.Short() {
		t.Skip("the release suite four times")
	}
	all := []sut.System{System{}, System{Defect: PublishBeforeWrite}, System{Defect: TerminalOverwrite},
		System{Defect: StaleResultApplied}, System{Defect: TerminalRecordExpires}}
	for _, c := range []struct {
		sys     System
		code    int
		checker string
	}{
		{System{}, 0, ""},
		{System{Defect: PublishBeforeWrite}, 1, "exactly_once_publish"},
		{System{Defect: TerminalOverwrite}, 1, "no_resurrection"},
		{System{Defect: StaleResultApplied}, 1, "result_of_current_dispatch"},
		{System{Defect: TerminalRecordExpires}, 1, "submit_dedup"},
	} {
		t.Run(c.sys.Name(), func(t *testing.T) {
			dir := t.TempDir()
			var out, errs bytes.Buffer
			code := simrun.Run([]string{"run", "--system", c.sys.Name(), "--suite", "release", "-j", "1", "--out", dir},
				nil, &out, &errs, all...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, tail(out.String()))
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				Seeds []struct {
					Violations []struct{ Checker string } `json:"violations"`
				} `json:"seeds"`
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			found := c.checker == ""
			for _, s := range sum.Seeds {
				for _, v := range s.Violations {
					found = found || v.Checker == c.checker
				}
			}
			if !found {
				t.Fatalf("no seed failed %s\n%s", c.checker, tail(out.String()))
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}
