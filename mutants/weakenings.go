package mutants

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Weakening is a realistic mistake put into the harness's own code, as a
// person would make it and an operator-based tool would not: a predicate
// narrowed to one case, a conjunct or disjunct dropped, the wrong helper,
// entry or clock used, bookkeeping moved past the check that reads it. The
// tests that own the code must fail for the predicted reason: Test, run in
// Package, fails and its output says Fails.
type Weakening struct {
	Name string
	// Judge is the checker clause, excuse, bound or simulated promise it
	// weakens, in words.
	Judge       string
	Description string
	Edits       []Edit
	Package     string // as go test names it, from the module root
	Test        string // go test -run
	Fails       string // what the failing output must say
}

// Weakenings is the catalog: every checker clause, excuse and bound and
// every simulated promise the harness keeps has one here (or in the
// packages' own mutation score, docs/mutation-score.md).
var Weakenings = []Weakening{
	{Name: "resurrection-of-succeeded-only", Judge: "no_resurrection",
		Description: "only a job that left SUCCEEDED counts as resurrected; the other terminal states may be left",
		Edits: []Edit{{File: "checker/invariants.go", From: "\t\t\tif c.in.System.IsTerminal(s.To) {\n\t\t\t\tterminal",
			To: "\t\t\tif s.To == c.in.System.Succeeded {\n\t\t\t\tterminal"}},
		Package: "./checker", Test: "TestResurrectionFromEveryTerminalStateIsCaught", Fails: "no_resurrection"},
	{Name: "timeout-from-the-first-entry", Judge: "timeout_not_early",
		Description: "a timeout is measured from the job's first entry into the state, not the entry it ends",
		Edits: []Edit{{File: "checker/refinement.go", From: "entered, ok := c.enteringChange(cm.Job, cm.State.From, cm.Step)",
			To: "entered, ok := c.firstEntered(cm.Job, cm.State.From)"}},
		Package: "./checker", Test: "TestTimeoutIsMeasuredFromTheEntryItEnds", Fails: "timeout_not_early"},
	{Name: "submit-dedup-counts-terminal-only", Judge: "submit_dedup",
		Description: "a job made again from nothing (its record expired) is not counted as made again",
		Edits:       []Edit{{File: "checker/submits.go", From: `(s.From == "" || sys.IsTerminal(s.From))`, To: `sys.IsTerminal(s.From)`}},
		Package:     "./checker", Test: "TestSubmitRetriedInsideTheWindowMakingASecondJobIsCaught", Fails: "submit_dedup"},
	{Name: "stranded-lock-of-a-live-holder", Judge: "dispatch_timeout's bound",
		Description: "any lock left unreleased delays the bound, not only one whose holder went down",
		Edits:       []Edit{{File: "checker/liveness.go", From: "if c.wentDownSince(ls.taker, last.Step) {", To: "if true {"}},
		Package:     "./checker", Test: "TestAStrandedLockDelaysTheDispatchTimeoutBound", Fails: "a holder that stayed up excuses nothing"},
	{Name: "lapse-excused-by-any-replica", Judge: "lock_renewed's excuse",
		Description: "a crash of any replica excuses a lease's lapse, not only one of the section's own",
		Edits: []Edit{{File: "checker/leases.go", From: "if f.Time < taken || f.Time > lapse || group(f.Actor) != g {",
			To: "if f.Time < taken || f.Time > lapse || g == \"\" {"}},
		Package: "./checker", Test: "TestAKillOfTheSectionsReplicaExcusesItsLapse", Fails: "another replica killed"},
	{Name: "attempt-rule-ignores-the-spec", Judge: "attempts, retry caps (sut.Spec.ChargesAttempt)",
		Description: "every entry into the scheduled state is charged, whatever AttemptsFrom says",
		Edits: []Edit{{File: "sut/spec.go", From: "\tif s.AttemptsFrom == nil {\n\t\treturn true\n\t}",
			To: "\tif true {\n\t\treturn true\n\t}"}},
		Package: "./checker", Test: "TestTheAttemptRuleIsTheSpecs", Fails: "attempts"},
	{Name: "late-retry-past-the-window", Judge: "clients' late retry (SubmitRetriedLate)",
		Description: "a client's late retry waits its whole draw, past the window the spec promises",
		Edits:       []Edit{{File: "sim/traffic/clients.go", From: "min(late, c.dedupWindow)", To: "late"}},
		Package:     "./scenarios", Test: "TestLateSubmitRetriesComeInsideTheWindow", Fails: "is not less than or equal to"},
	{Name: "fail-fast-still-awaits-a-route", Judge: "case applicability (FeatureRouteAwaited)",
		Description: "a system that fails a job without a route at once is still held to a late mapping's window",
		Edits:       []Edit{{File: "scenarios/fit.go", From: "return !s.NoRouteFailsAtOnce", To: "return true"}},
		Package:     "./scenarios", Test: "TestFailFastRoutingIsNotHeldToAGrace", Fails: "TestFailFastRoutingIsNotHeldToAGrace"},
	{Name: "shared-id-recorded-after-the-check", Judge: "adapter check: dispatch ids across generations",
		Description: "the generation is recorded after the check that counts generations per id, so a shared id is never seen",
		Edits: []Edit{{File: "adaptercheck/audit.go",
			From: "\t\tbyID[key][e.Gen] = true\n\t\tif len(byID[key]) == 2 && len(a.sameID) < 3 {\n\t\t\ta.sameID = append(a.sameID, fmt.Sprintf(\"%s seed %d job %s (dispatch id %q)\", o.Scenario, o.Seed, e.JobID, e.DispatchID))\n\t\t}\n",
			To:   "\t\tif len(byID[key]) == 2 && len(a.sameID) < 3 {\n\t\t\ta.sameID = append(a.sameID, fmt.Sprintf(\"%s seed %d job %s (dispatch id %q)\", o.Scenario, o.Seed, e.JobID, e.DispatchID))\n\t\t}\n\t\tbyID[key][e.Gen] = true\n"}},
		Package: "./adaptercheck", Test: "TestADispatchIDOfTwoGenerationsIsNamed", Fails: "should have 1 item(s), but has 0"},
	{Name: "store-loss-moves-judged-as-the-systems", Judge: "adapter check: the environment's moves",
		Description: "a store loss putting back an older copy is judged as a move the system made",
		Edits:       []Edit{{File: "adaptercheck/audit.go", From: "\t\tif lostAt(o, c.JobID, c.Step) {\n\t\t\tcontinue // the store", To: "\t\tif false {\n\t\t\tcontinue // the store"}},
		Package:     "./adaptercheck", Test: "TestBundledAdaptersPass", Fails: "Transitions do not allow"},
	{Name: "strategy-left-off-printed-lines", Judge: "printed replay and shrink lines",
		Description: "the lines that reproduce a seed leave its scheduling strategy off, so they run the uniform pick",
		Edits:       []Edit{{File: "scenarios/scenario.go", From: "\tif f := v.StrategyFlag(); f != \"\" {", To: "\tif f := v.StrategyFlag(); false && f != \"\" {"}},
		Package:     "./simrun", Test: "TestEveryPrintedLineRoundTrips/strategy", Fails: "another run"},
	{Name: "replay-runs-the-default-system", Judge: "replay of a recorded run",
		Description: "a replay by scenario and seed runs the build's default system, not the one the run recorded",
		Edits:       []Edit{{File: "simrun/replay.go", From: "\tif _, err := os.Stat(sumFile); err != nil || scenario == \"\" || seed == \"\" {", To: "\tif true {"}},
		Package:     "./simrun", Test: "TestPrintedLinesReproduceForANonDefaultSystem", Fails: "TestPrintedLinesReproduceForANonDefaultSystem"},
	{Name: "role-by-first-match", Judge: "report colours and tooltips of a state's role",
		Description: "a state holding the scheduled and dispatched roles is coloured as scheduled",
		Edits: []Edit{{File: "reports/roles.go", From: "\tswitch state {\n\tcase s.Dispatched:\n\t\treturn roleDispatched\n",
			To: "\tswitch state {\n\tcase s.Scheduled:\n\t\treturn roleScheduled\n\tcase s.Dispatched:\n\t\treturn roleDispatched\n"}},
		Package: "./reports", Test: "TestAStateWithTwoRolesIsColouredByTheOneAJobSitsIn", Fails: "TestAStateWithTwoRolesIsColouredByTheOneAJobSitsIn"},
}

// LookupWeakening finds a weakening by name.
func LookupWeakening(name string) (Weakening, bool) {
	for _, w := range Weakenings {
		if w.Name == name {
			return w, true
		}
	}
	return Weakening{}, false
}

// Overlay writes the weakening's edits of root's files into dir and returns
// the go build -overlay file that puts them in.
func (w Weakening) Overlay(root, dir string) (string, error) {
	return Mutant{Name: w.Name, Edits: w.Edits}.Overlay(root, dir)
}

// Kill runs the weakening's test against it from root and says whether it
// died for the predicted reason: the test failed and its output says Fails.
// A test that fails for another reason (the weakening does not build, or
// the output does not name it) is an error, not a kill.
func (w Weakening) Kill(ctx context.Context, root string) (killed bool, out string, err error) {
	dir, err := os.MkdirTemp("", "weakening-")
	if err != nil {
		return false, "", err
	}
	defer os.RemoveAll(dir)
	overlay, err := w.Overlay(root, dir)
	if err != nil {
		return false, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-overlay", overlay, "-run", "^"+runPattern(w.Test)+"$", w.Package)
	cmd.Dir = root
	// Tests that build a program of their own (simrun's CLI tests) build it
	// with the weakening in too.
	cmd.Env = append(os.Environ(), TestOverlayEnv+"="+overlay)
	b, runErr := cmd.CombinedOutput()
	out = string(b)
	if runErr == nil {
		return false, out, nil // survived: the test passed
	}
	if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
		return false, out, fmt.Errorf("weakening %s does not build: %s", w.Name, firstLines(out, 8))
	}
	if !strings.Contains(out, w.Fails) {
		return false, out, fmt.Errorf("weakening %s failed %s without saying %q: %s", w.Name, w.Test, w.Fails, firstLines(out, 12))
	}
	return true, out, nil
}

// TestOverlayEnv names the go build -overlay file a test's own builds add,
// so a weakening reaches a program a test builds and runs (the simrun CLI).
const TestOverlayEnv = "DISPATCHSIM_TEST_OVERLAY"

// MergeOverlays joins two go build -overlay files into one written in dir
// (b may be ""; a file both replace keeps a's content).
func MergeOverlays(a, b, dir string) (string, error) {
	if b == "" {
		return a, nil
	}
	merged := map[string]string{}
	for _, f := range []string{b, a} {
		raw, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		var o struct{ Replace map[string]string }
		if err := json.Unmarshal(raw, &o); err != nil {
			return "", fmt.Errorf("overlay %s: %w", f, err)
		}
		for k, v := range o.Replace {
			merged[k] = v
		}
	}
	out, err := json.Marshal(map[string]map[string]string{"Replace": merged})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "merged-overlay.json")
	return path, os.WriteFile(path, out, 0o644)
}

// runPattern anchors each level of a test name (Parent/sub) for go test -run.
func runPattern(test string) string {
	return strings.ReplaceAll(test, "/", "$/^")
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
