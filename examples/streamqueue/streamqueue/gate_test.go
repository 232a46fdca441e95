package streamqueue

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchsim/dispatchsim/adaptercheck"
	"github.com/dispatchsim/dispatchsim/scenarios"
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

// The correct dispatcher passes scenarios that reach each of its branches:
// crashed workers whose entries the reaper takes back, jobs that outlive
// the lease, late and duplicated results, cancels, a topic without a pool,
// a store outage and a store that forgets writes, a rolling deploy.
func TestCorrectDispatcherPasses(t *testing.T) {
	cases := []struct {
		scenario string
		seeds    []uint64
	}{
		// 4005: a success that came back after its lease put the job back
		// was ignored as not dispatched, and the job ended CANCELLED
		// (success_result_kept); a success of the generation a QUEUED job
		// was put back from now lands.
		{"terminal-resurrection", []uint64{4000, 4005}},
		{"reconciler-vs-late-result", []uint64{7000}},
		// The lease once counted from a worker's read (XAUTOCLAIM's
		// min-idle): a job that waited in its pool's stream for a worker
		// with room stayed DISPATCHED past the dispatch timeout
		// (dispatch_timeout). It counts from the dispatch now.
		{"topic-timeouts", []uint64{7100}},
		{"cancels", []uint64{4600}},
		{"no-pool-mapping-static", []uint64{3100}},
		{"store-outage", []uint64{8000}},
		{"store-failover", []uint64{8800}},
		{"worker-failures", []uint64{8500}},
		{"rolling-deploy", []uint64{8700}},
		{"long-jobs", []uint64{1200}},
		{"swarm", []uint64{9000}},
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

// Defect 1: a work entry acknowledged as it is pulled leaves nothing
// pending when its worker crashes mid-job; the reaper never sees it, and
// the job stays DISPATCHED.
func TestAckOnPullIsCaught(t *testing.T) {
	caught(t, AckOnPull, "worker-failures", "dispatch_timeout", 8500, 4)
}

// Defect 2: a reaper that takes back entries however recently they were
// dispatched puts running jobs back, and they run again beside their
// first run.
func TestReapIgnoresLeaseIsCaught(t *testing.T) {
	caught(t, ReapIgnoresLease, "worker-outcomes", "no_concurrent_dispatches", 4500, 4)
}

// Defect 3: a result applied to a job that ended moves it out of its
// terminal state.
func TestTerminalOverwriteIsCaught(t *testing.T) {
	caught(t, TerminalOverwrite, "terminal-resurrection", "no_resurrection", 4000, 3)
}

// Defect 4: a dead letter filed under the retry cap's code for a job no
// pool could take hides its cause.
func TestDeadLetterHidesCauseIsCaught(t *testing.T) {
	caught(t, DeadLetterHidesCause, "no-pool-mapping-static", "dlq_root_cause", 3100, 3)
}

// One seed run twice gives the same checksum: the dispatcher and its
// pulling workers draw nothing from the wall clock, global randomness or
// the Go scheduler.
func TestDeterministic(t *testing.T) {
	for _, d := range []Defect{"", AckOnPull} {
		a, b := run(t, System{Defect: d}, "swarm", 9001), run(t, System{Defect: d}, "swarm", 9001)
		if a.Checksum != b.Checksum || a.Steps != b.Steps {
			t.Fatalf("%s: checksums %x and %x, steps %d and %d", a.System, a.Checksum, b.Checksum, a.Steps, b.Steps)
		}
	}
}

// The adapter passes check.
func TestCheck(t *testing.T) {
	if rep := adaptercheck.Check(System{}); rep.Failed() {
		t.Fatalf("the correct dispatcher fails check:\n%s", rep)
	}
}

type summary struct {
	Cases []struct {
		Scenario   string   `json:"scenario"`
		Passed     bool     `json:"passed"`
		NeverFired []string `json:"never_fired"`
	} `json:"cases"`
	Seeds []struct {
		Scenario   string                     `json:"scenario"`
		Seed       uint64                     `json:"seed"`
		Verdict    string                     `json:"verdict"`
		Violations []struct{ Checker string } `json:"violations"`
	} `json:"seeds"`
}

// gate runs the release suite on sys through the command line, as CI runs
// it, and returns its exit code and summary.
func gate(t *testing.T, sys System) (int, summary, string) {
	t.Helper()
	all := []sut.System{System{}, System{Defect: AckOnPull}, System{Defect: ReapIgnoresLease},
		System{Defect: TerminalOverwrite}, System{Defect: DeadLetterHidesCause}}
	dir := t.TempDir()
	var out, errs bytes.Buffer
	code := simrun.Run([]string{"run", "--system", sys.Name(), "--suite", "release", "-j", "1", "--out", dir},
		nil, &out, &errs, all...)
	var sum summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("exit %d, no summary: %v\n%s%s", code, err, tail(out.String()), errs.String())
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return code, sum, tail(out.String())
}

// The release gate through the command line: the correct dispatcher passes
// (exit 0; the environment's findings after a store loss are not its), the
// cases about dispatches over the bus not applicable by its spec. Each
// planted defect fails it with the checker that names the defect.
func TestReleaseGate(t *testing.T) {
	if testing.Short() {
		t.Skip("the release suite five times")
	}
	t.Run("streamqueue", func(t *testing.T) {
		code, sum, out := gate(t, System{})
		for _, s := range sum.Seeds {
			if s.Verdict != "pass" && s.Verdict != "environment" {
				t.Errorf("%s seed %d: %s", s.Scenario, s.Seed, s.Verdict)
			}
		}
		for _, c := range sum.Cases {
			if !c.Passed {
				t.Errorf("%s fails, never fired: %v", c.Scenario, c.NeverFired)
			}
		}
		if code != 0 || t.Failed() {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	for _, c := range []struct {
		sys     System
		checker string
	}{
		{System{Defect: AckOnPull}, "dispatch_timeout"},
		{System{Defect: ReapIgnoresLease}, "no_concurrent_dispatches"},
		{System{Defect: TerminalOverwrite}, "no_resurrection"},
		{System{Defect: DeadLetterHidesCause}, "dlq_root_cause"},
	} {
		t.Run(c.sys.Name(), func(t *testing.T) {
			code, sum, out := gate(t, c.sys)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, out)
			}
			for _, s := range sum.Seeds {
				for _, v := range s.Violations {
					if v.Checker == c.checker {
						return
					}
				}
			}
			t.Fatalf("no seed failed %s\n%s", c.checker, out)
		})
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}
