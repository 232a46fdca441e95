package simrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// errNondeterministic marks a seed whose re-run did not reproduce its
// checksum: the harness or the engine leaks nondeterminism (exit 5).
type errNondeterministic struct{ msg string }

func (e *errNondeterministic) Error() string { return e.msg }

// seedRun is one executed task: its result and, for a failing seed, the
// failure told for a terminal (derived options first, the replay line last).
type seedRun struct {
	Result  reports.SeedResult `json:"result"`
	Failure string             `json:"failure,omitempty"`
	// Compare is a compare task's answer.
	Compare *reports.SeedFacts `json:"compare,omitempty"`
	// Moments are the run's rare moments, when the task asked.
	Moments []moment `json:"moments,omitempty"`
	// Events are the keys of the events after the branch's step, when the
	// task asked.
	Events []string `json:"events,omitempty"`
}

// execute runs one task. A plain task only judges the seed. An artifacts
// task runs a failing seed again with its trace kept, holds it to the first
// run's checksum (a determinism check for free), and writes its folder under
// out.
//
// A panic in the world's run is the run's result (sim.World.Run); one that
// escapes it (in the check, or writing the report) fails the seed here, so
// the worker process and the pool go on with the other seeds.
func execute(t task, out string) (run seedRun, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			run, err = escapedPanic(t, out, sim.RecoveredPanic("simrun, outside the world's run", rec))
		}
	}()
	return executeTask(t, out)
}

// escapedPanic fails a seed whose task panicked outside the world's run:
// on the harness layer when the harness raised it, as the system's
// otherwise. Nothing of the run is left to write: an artifacts task says so
// as its error, and its folder is removed as half-written.
func escapedPanic(t task, out string, cause error) (seedRun, error) {
	res := reports.SeedResult{System: t.System, Scenario: t.Scenario, Finding: t.Finding, Seed: t.Seed, Branch: t.Branch,
		Strategy: t.Strategy, Linearizability: string(checker.LinSkipped), Verdict: reports.VerdictHarness}
	v := reports.Violation{Layer: string(checker.LayerHarness), Checker: "harness_fault", Message: cause.Error()}
	var harness checker.HarnessFault
	if !errors.As(cause, &harness) {
		res.Verdict = reports.VerdictSafety
		v.Layer, v.Checker = string(checker.LayerAssumptions), "run_completed"
	}
	res.Violations = []reports.Violation{v}
	if variant, err := parseVariant(t.Branch, t.Strategy); err == nil {
		res.Replay = replayFromSummary(out, t.System, t.Scenario, t.Seed, variant)
	}
	if t.Artifacts {
		return seedRun{Result: res}, fmt.Errorf("%s seed %d: no artifacts: %s", t.Scenario, t.Seed, oneLine(cause.Error()))
	}
	return seedRun{Result: res}, nil
}

func executeTask(t task, out string) (seedRun, error) {
	sc, ok := scenarios.Lookup(t.Scenario)
	if !ok {
		return seedRun{}, fmt.Errorf("unknown scenario %q", t.Scenario)
	}
	sys, err := lookupSystem(t.System)
	if err != nil {
		return seedRun{}, err
	}
	v, err := parseVariant(t.Branch, t.Strategy)
	if err != nil {
		return seedRun{}, err
	}
	sc = sc.On(sys).With(v)
	if t.Compare {
		o := sc.Run(t.Seed)
		f := reports.CompareSeed(sys.Spec(sut.Options{}), reports.Run{System: sys.Name(), Scenario: sc.Name, Seed: t.Seed,
			Result: o.Result, History: o.Run.History})
		res := reports.SeedResultOf(reportRun(o), t.Expect) // the seed's verdict and coverage, as run judges them
		res.Finding = t.Finding
		return seedRun{Result: res, Compare: &f}, nil
	}
	if !t.Artifacts {
		o := sc.Run(t.Seed)
		res := reports.SeedResultOf(reportRun(o), t.Expect)
		res.Finding = t.Finding
		if !passed(res) {
			res.Replay = replayFromSummary(out, sys.Name(), t.Scenario, t.Seed, v)
		}
		run := seedRun{Result: res}
		if t.Moments {
			run.Moments = momentsOf(o)
		}
		if t.Events {
			run.Events = eventKeysAfter(o, v.Branch.Step)
		}
		return run, nil
	}
	traced := sc.RunTraced(t.Seed, nil)
	res := reports.SeedResultOf(reportRun(traced), t.Expect)
	res.Finding = t.Finding
	if t.Checksum != "" && res.Checksum != t.Checksum {
		return seedRun{Result: res}, &errNondeterministic{msg: fmt.Sprintf(
			"%s seed %d is not deterministic: checksum %s, then %s on a re-run", sc.Name, t.Seed, t.Checksum, res.Checksum)}
	}
	dir := artifactDir(t.Scenario, t.Seed, v)
	res.Artifacts = dir
	res.Replay = replayFrom(filepath.Join(out, dir))
	run := seedRun{Result: res, Failure: describeFailure(sc, traced, res, filepath.Join(out, dir))}
	return run, writeArtifacts(filepath.Join(out, dir), sc, traced, res, reports.Meta{Replay: res.Replay})
}

// progName is how printed command lines name this program: simrun, or the
// name of a team's own binary built on Main.
var progName = "simrun"

// replayFrom is the line that replays a seed from its artifact folder: the
// recorded system, checksum, plan and commit come with it.
func replayFrom(dir string) string { return progName + " replay --from " + shellQuote(dir) }

// replayFromSummary replays a failing seed that has no folder (over
// --max-artifacts): summary.json under out has its checksum. The system is
// named: summary.json holds seeds of any system, and a replay of the
// default one would not reproduce another's.
func replayFromSummary(out, system, scenario string, seed uint64, v scenarios.Variant) string {
	return fmt.Sprintf("%s replay --out %s%s --scenario %s --seed %d%s", progName, shellQuote(out), systemFlag(system),
		scenario, seed, v.Flags())
}

// shrinkLine shrinks a seed's fault plan, on its own system.
func shrinkLine(system, scenario string, seed uint64, v scenarios.Variant) string {
	return fmt.Sprintf("%s shrink%s --scenario %s --seed %d%s", progName, systemFlag(system), scenario, seed, v.Flags())
}

// likelihoodLine shows when a seed's failure became certain (a branch of a
// seed is not one: its moments are the seed's).
func likelihoodLine(system, scenario string, seed uint64, v scenarios.Variant) string {
	return fmt.Sprintf("%s likelihood%s --scenario %s --seed %d%s", progName, systemFlag(system), scenario, seed, v.Flags())
}

// systemFlag is " --system NAME" for every system but this program's
// default, the one a pasted line without the flag runs.
func systemFlag(system string) string {
	if system == "" || system == defaultSystem() {
		return ""
	}
	return " --system " + shellQuote(system)
}

// shellQuote quotes s for a POSIX shell when it needs it, so a printed line
// pastes as it is.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '+' || r == '=' || r == ',' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// describeFailure tells a failing seed: what the seed derived, what broke,
// where the report is, and the one line that reproduces it.
func describeFailure(sc scenarios.Scenario, o *scenarios.Outcome, res reports.SeedResult, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FAIL %s seed %d (%s)\n", sc.Name, o.Seed, res.Verdict)
	for _, opt := range derivedOptions(sc, o) {
		fmt.Fprintf(&b, "  %-14s %s\n", opt.Name+":", opt.Value)
	}
	const shown = 10
	for i, v := range res.Violations {
		if i == shown {
			fmt.Fprintf(&b, "  ... and %d more violations (summary.json has them all)\n", len(res.Violations)-shown)
			break
		}
		msg := v.Message
		if first, _, more := strings.Cut(msg, "\n"); more {
			// A harness fault's stack and trace tail: the report and
			// seed.json have them whole.
			msg = first + " (stack and trace tail in seed.json and report.html)"
		}
		fmt.Fprintf(&b, "  %s/%s %s step=%d: %s\n", v.Layer, v.Checker, v.Job, v.Step, msg)
	}
	if res.Linearizability != "ok" {
		fmt.Fprintf(&b, "  linearizability: %s\n", res.Linearizability)
	}
	fmt.Fprintf(&b, "  report:        %s\n", filepath.Join(dir, "report.html"))
	fmt.Fprintf(&b, "  replay: %s\n", res.Replay)
	fmt.Fprintf(&b, "  shrink: %s\n", shrinkLine(o.System, sc.Name, o.Seed, o.Variant))
	return b.String()
}

// passed: the seed holds the system to its promises; findings the
// environment's broken contract explains are not the system's.
func passed(r reports.SeedResult) bool {
	return r.Verdict == reports.VerdictPass || r.Verdict == reports.VerdictExpected ||
		r.Verdict == reports.VerdictEnvironment
}

// artifactDir is a failing seed's directory, relative to the out dir; a
// branch or another strategy has a folder of its own inside the seed's.
func artifactDir(scenario string, seed uint64, v scenarios.Variant) string {
	dir := filepath.Join(scenario, strconv.FormatUint(seed, 10))
	var parts []string
	if !v.Branch.IsZero() {
		parts = append(parts, fmt.Sprintf("branch-%d-%d", v.Branch.Step, v.Branch.N))
		if v.Branch.Focus != "" {
			parts = append(parts, "focus-"+v.Branch.Focus)
		}
	}
	if s := v.StrategyFlag(); s != "" {
		parts = append(parts, "strategy-"+strings.ReplaceAll(s, ":", "-"))
	}
	if len(parts) == 0 {
		return dir
	}
	return filepath.Join(dir, strings.Join(parts, "-"))
}

// writeArtifacts writes a failing seed's trace.log, plan.json, history.json,
// seed.json and report.html, each atomically. meta's Plan, if set, is the plan
// the report shows (a shrunk one); the run's own plan is always plan.json.
func writeArtifacts(dir string, sc scenarios.Scenario, o *scenarios.Outcome, res reports.SeedResult, meta reports.Meta) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	prov := provenance()
	meta.EngineVersion = prov.String()
	res.Provenance = &prov
	meta.Options = derivedOptions(sc, o)
	if meta.Replay == "" {
		meta.Replay = replaySeed(o.System, o.Scenario, o.Seed, o.Variant)
	}
	if meta.Shrink == "" {
		meta.Shrink = shrinkLine(o.System, sc.Name, o.Seed, o.Variant)
	}
	if meta.Explain == "" && o.Variant.Branch.IsZero() {
		meta.Explain = likelihoodLine(o.System, sc.Name, o.Seed, o.Variant)
	}
	writes := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"trace.log", func(w io.Writer) error { _, err := w.Write(o.World.Trace().Bytes()); return err }},
		{"plan.json", func(w io.Writer) error { return writePlan(w, o.Plan) }},
		{"history.json", func(w io.Writer) error { return writeJSON(w, o.Run.History) }},
		{"seed.json", func(w io.Writer) error { return writeJSON(w, res) }},
		{"report.html", func(w io.Writer) error {
			return reports.NewSeedReport(reportRun(o), sc.ExpectViolation, meta).WriteHTML(w)
		}},
	}
	for _, f := range writes {
		if err := reports.WriteFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return fmt.Errorf("artifacts: %s: %w", f.name, err)
		}
	}
	return nil
}

func writePlan(w io.Writer, p faults.Plan) error {
	b, err := p.Encode()
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
