package simrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
)

// seedTarget is the scenario, seed and optional plan a replay or shrink names.
type seedTarget struct {
	sc   scenarios.Scenario
	seed uint64
	plan *faults.Plan
}

func resolveTarget(system, scenario, seed, planFile string, v scenarios.Variant) (seedTarget, error) {
	if scenario == "" || seed == "" {
		return seedTarget{}, fmt.Errorf("--scenario and --seed are required")
	}
	sc, ok := scenarios.Lookup(scenario)
	if !ok {
		return seedTarget{}, unknownName("scenario", scenario, scenarioNames())
	}
	sys, err := lookupSystem(system)
	if err != nil {
		return seedTarget{}, fmt.Errorf("--system: %v", err)
	}
	sc = sc.On(sys).With(v)
	s, err := sim.ParseSeed(seed)
	if err != nil {
		return seedTarget{}, fmt.Errorf("--seed: %v", err)
	}
	t := seedTarget{sc: sc, seed: s}
	if planFile != "" {
		b, err := os.ReadFile(planFile)
		if err != nil {
			return seedTarget{}, fmt.Errorf("--plan: %v", err)
		}
		p, err := faults.DecodePlan(b)
		if err != nil {
			return seedTarget{}, fmt.Errorf("--plan %s: %v", planFile, err)
		}
		if p.Seed != s {
			return seedTarget{}, fmt.Errorf("--plan %s was recorded for seed %d, not %d", planFile, p.Seed, s)
		}
		if p.Branch != v.Branch.String() {
			return seedTarget{}, fmt.Errorf("--plan %s was recorded on branch %q, not %q (give --branch %s)", planFile,
				p.Branch, v.Branch.String(), orSeed(p.Branch))
		}
		t.plan = &p
	}
	return t, nil
}

func newReplayCmd() *cobra.Command {
	var system, scenario, seed, planFile, out, checksum, from, branch, strategy string
	var untilStep uint64
	var trace bool
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Re-run one seed, verify its checksum (exit 5 on a mismatch), and write its report",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var t seedTarget
			var rec record
			var err error
			if from != "" {
				for _, name := range []string{"plan", "checksum", "out", "branch", "strategy"} {
					if cmd.Flags().Changed(name) {
						return usageErrorf("--from %s records the plan, checksum and folder: drop --%s", from, name)
					}
				}
				if t, rec, err = readSeedFolder(from, scenario, seed); err != nil {
					return usageErrorf("%v", err)
				}
				out = from
			} else {
				v, err := parseVariant(branch, strategy)
				if err != nil {
					return usageErrorf("%v", err)
				}
				if !cmd.Flags().Changed("system") && checksum == "" {
					// The run under --out recorded its system: replay that one.
					if system, err = recordedSystem(out, scenario, seed, system); err != nil {
						return usageErrorf("%v", err)
					}
				}
				if t, err = resolveTarget(system, scenario, seed, planFile, v); err != nil {
					return usageErrorf("%v", err)
				}
			}
			if cmd.Flags().Changed("until-step") {
				return replayUntil(cmd.OutOrStdout(), t, untilStep)
			}
			if from == "" {
				if rec, err = recordedChecksum(cmd.ErrOrStderr(), out, t, checksum); err != nil {
					return usageErrorf("%v", err)
				}
			}
			warnCommit(cmd.ErrOrStderr(), rec)
			return replay(cmd.OutOrStdout(), t, rec, out, from != "", trace)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "a failing seed's folder (<out>/<scenario>/<seed>): replay it with the plan, checksum and commit it recorded")
	fl.StringVar(&system, "system", defaultSystem(), systemUsage())
	fl.StringVar(&scenario, "scenario", "", "scenario of the seed")
	fl.StringVar(&seed, "seed", "", "seed to replay (decimal, 0x-hex or a 40-hex commit id)")
	fl.StringVar(&planFile, "plan", "", "force this recorded fault plan (plan.json, or a shrunk plan.min.json)")
	fl.StringVar(&branch, "branch", "", branchUsage)
	fl.StringVar(&strategy, "strategy", "", strategyUsage)
	fl.Uint64Var(&untilStep, "until-step", 0, "stop at this step and print the world's state: jobs, locks, in-flight messages")
	fl.BoolVar(&trace, "trace", false, "print the whole trace")
	fl.StringVar(&out, "out", "simrun-out", "where the run recorded the seed, and where a failing replay writes its artifacts")
	fl.StringVar(&checksum, "checksum", "", "expected checksum (16 hex digits); default: the one the run recorded under --out")
	return cmd
}

// record is what a replay is held to: a recorded checksum (or none: then a
// second run), where it came from, and the build that recorded it.
type record struct {
	checksum, from string
	prov           *reports.Provenance
}

// readSeedFolder reads a failing seed's folder: seed.json names the scenario,
// seed, checksum and commit; plan.json, when there, is the plan to force. A
// record that is there but unreadable is an error, never a quiet fallback.
// scenario and seed, when given, must agree with it.
func readSeedFolder(dir, scenario, seed string) (seedTarget, record, error) {
	if st, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return seedTarget{}, record{}, fmt.Errorf("--from %s: no such folder (want a failing seed's folder, <out>/<scenario>/<seed>)", dir)
	} else if err != nil {
		return seedTarget{}, record{}, fmt.Errorf("--from %s: %v", dir, err)
	} else if !st.IsDir() {
		return seedTarget{}, record{}, fmt.Errorf("--from %s: not a directory (want <out>/<scenario>/<seed>)", dir)
	}
	seedFile := filepath.Join(dir, "seed.json")
	r, err := readSeedJSON(seedFile)
	if err != nil {
		return seedTarget{}, record{}, err
	}
	t, err := resolveTarget(r.System, r.Scenario, fmt.Sprint(r.Seed), "", variantOf(r))
	if err != nil {
		return seedTarget{}, record{}, fmt.Errorf("%s: %v", seedFile, err)
	}
	if scenario != "" && scenario != t.sc.Name {
		return seedTarget{}, record{}, fmt.Errorf("--from %s holds scenario %s, not %s", dir, t.sc.Name, scenario)
	}
	if seed != "" {
		if s, err := sim.ParseSeed(seed); err != nil || s != t.seed {
			return seedTarget{}, record{}, fmt.Errorf("--from %s holds seed %d, not %s", dir, t.seed, seed)
		}
	}
	planFile := filepath.Join(dir, "plan.json")
	if _, err := os.Stat(planFile); err == nil {
		withPlan, err := resolveTarget(r.System, t.sc.Name, fmt.Sprint(t.seed), planFile, variantOf(r))
		if err != nil {
			return seedTarget{}, record{}, err
		}
		t = withPlan
	}
	return t, record{checksum: r.Checksum, from: seedFile, prov: r.Provenance}, nil
}

// readSeedJSON reads a seed.json that must be whole: a scenario and a checksum.
func readSeedJSON(path string) (reports.SeedResult, error) {
	var r reports.SeedResult
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("recorded seed %s: %v", path, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("recorded seed %s is corrupt: %v", path, err)
	}
	if r.Scenario == "" || !isChecksum(r.Checksum) {
		return r, fmt.Errorf("recorded seed %s is corrupt: no scenario or checksum", path)
	}
	return r, nil
}

func isChecksum(s string) bool {
	_, err := strconv.ParseUint(s, 16, 64)
	return err == nil && len(s) == 16
}

// warnCommit says, before any checksum is compared, that the run was
// recorded by another build: a mismatch may then be the code, not
// nondeterminism.
func warnCommit(w io.Writer, rec record) {
	if rec.prov == nil {
		return
	}
	now := provenance()
	if rec.prov.Commit == now.Commit && rec.prov.Dirty == now.Dirty {
		return
	}
	fmt.Fprintf(w, "simrun: warning: %s was recorded by %s; this is %s: a checksum mismatch may be the code, not nondeterminism\n",
		rec.from, rec.prov, now)
}

// replay re-runs the seed and holds it to its recorded checksum, or, with no
// record, to a second run of itself. A failing replay writes its artifacts
// under out (beside the recorded ones, in replay/, when out is the seed's
// own folder or a plan was forced).
func replay(w io.Writer, t seedTarget, rec record, out string, intoFolder, trace bool) error {
	o := t.sc.RunTraced(t.seed, t.plan)
	got := fmt.Sprintf("%016x", o.Checksum)
	if rec.checksum == "" {
		again := t.sc.RunTraced(t.seed, t.plan)
		rec.checksum, rec.from = fmt.Sprintf("%016x", again.Checksum), "a second run (nothing was recorded)"
	}
	if trace {
		if _, err := w.Write(o.World.Trace().Bytes()); err != nil {
			return err
		}
	}
	if got != rec.checksum {
		return &exitError{code: exitNondeterministic,
			err: fmt.Errorf("%s seed %d: checksum %s, but %s gave %s: the replay does not reproduce the run (different code, or nondeterminism)",
				t.sc.Name, t.seed, got, rec.from, rec.checksum)}
	}
	fmt.Fprintf(w, "%s seed %d%s: %d steps, checksum %s matches %s\n", t.sc.Name, t.seed, t.sc.Variant().Flags(), o.Steps,
		got, rec.from)
	res := reports.SeedResultOf(reportRun(o), t.sc.ExpectViolation)
	fmt.Fprintf(w, "verdict: %s\n", res.Verdict)
	for _, v := range res.Violations {
		fmt.Fprintf(w, "  %s/%s %s step=%d: %s\n", v.Layer, v.Checker, v.Job, v.Step, v.Message)
	}
	if !passed(res) {
		dir := filepath.Join(out, artifactDir(t.sc.Name, t.seed, t.sc.Variant()))
		switch {
		case intoFolder:
			dir = filepath.Join(out, "replay")
		case t.plan != nil:
			dir = filepath.Join(dir, "replay")
		}
		res.Artifacts = dir
		res.Replay = replayFrom(dir)
		shrink := shrinkLine(t.sc.System.Name(), t.sc.Name, t.seed, t.sc.Variant())
		if err := writeArtifacts(dir, t.sc, o, res, reports.Meta{Replay: res.Replay, Shrink: shrink}); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		// The lines that reproduce it, as a run prints them: a replay of a
		// branch or a strategy has no run's folder to point at but this one.
		fmt.Fprintf(w, "report: %s\n  replay: %s\n  shrink: %s\n", filepath.Join(dir, "report.html"), res.Replay, shrink)
	}
	return exitWith(verdictCode(res.Verdict))
}

// recordedChecksum finds the checksum to hold a replay to: --checksum, else
// the seed's seed.json, else summary.json, under out. A replay with a forced
// plan has no record unless --checksum names one. A record that exists but
// cannot be read is an error; a summary that holds the seed as passing, or
// not at all, is said on w.
func recordedChecksum(w io.Writer, out string, t seedTarget, want string) (record, error) {
	if want != "" {
		if !isChecksum(want) {
			return record{}, fmt.Errorf("--checksum %q: want 16 hex digits", want)
		}
		return record{checksum: want, from: "--checksum"}, nil
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return record{}, fmt.Errorf("--out %s: not a directory", out)
	}
	if t.plan != nil {
		return record{}, nil
	}
	seedFile := filepath.Join(out, artifactDir(t.sc.Name, t.seed, t.sc.Variant()), "seed.json")
	var rec record
	if _, err := os.Stat(seedFile); err == nil {
		r, err := readSeedJSON(seedFile)
		if err != nil {
			return record{}, err
		}
		if r.Scenario != t.sc.Name || r.Seed != t.seed || !sameVariant(r, t.sc.Variant()) {
			return record{}, fmt.Errorf("recorded seed %s is %s seed %d, not %s seed %d", seedFile, r.Scenario, r.Seed, t.sc.Name, t.seed)
		}
		if err := sameSystem(seedFile, r.System, t); err != nil {
			return record{}, err
		}
		rec = record{checksum: r.Checksum, from: seedFile, prov: r.Provenance}
	}
	sumFile := filepath.Join(out, "summary.json")
	if _, err := os.Stat(sumFile); err != nil {
		return rec, nil
	}
	s, err := reports.ReadSummary(sumFile)
	if err != nil {
		return record{}, err
	}
	for _, r := range s.Seeds {
		if r.Scenario == t.sc.Name && r.Seed == t.seed && sameVariant(r, t.sc.Variant()) {
			if err := sameSystem(sumFile, r.System, t); err != nil {
				return record{}, err
			}
			if passed(r) {
				fmt.Fprintf(w, "simrun: note: %s has %s seed %d as %s\n", sumFile, t.sc.Name, t.seed, r.Verdict)
			}
			if rec.checksum == "" {
				prov := s.Provenance
				rec = record{checksum: r.Checksum, from: sumFile, prov: &prov}
			}
			return rec, nil
		}
	}
	fmt.Fprintf(w, "simrun: note: %s does not list %s seed %d: that run did not include it\n", sumFile, t.sc.Name, t.seed)
	return rec, nil
}

// recordedSystem is the system the run under out recorded for scenario's
// seed, from its summary.json, or fallback when out records none: a replay
// without --system re-runs what the run ran, not the default system.
func recordedSystem(out, scenario, seed, fallback string) (string, error) {
	sumFile := filepath.Join(out, "summary.json")
	if _, err := os.Stat(sumFile); err != nil || scenario == "" || seed == "" {
		return fallback, nil
	}
	s, err := reports.ReadSummary(sumFile)
	if err != nil {
		return "", err
	}
	n, err := sim.ParseSeed(seed)
	if err != nil {
		return "", fmt.Errorf("--seed: %v", err)
	}
	for _, r := range s.Seeds {
		if r.Scenario == scenario && r.Seed == n && r.System != "" {
			return r.System, nil
		}
	}
	if s.System != "" {
		return s.System, nil
	}
	return fallback, nil
}

// sameSystem refuses to hold a replay of one system to a checksum another
// system recorded: the mismatch would read as nondeterminism.
func sameSystem(file, recorded string, t seedTarget) error {
	if recorded == "" || recorded == t.sc.System.Name() {
		return nil
	}
	return fmt.Errorf("%s recorded %s seed %d on system %s, not %s (drop --system, or give --system %s)", file,
		t.sc.Name, t.seed, recorded, t.sc.System.Name(), recorded)
}

func verdictCode(verdict string) int {
	switch verdict {
	case "safety":
		return exitSafety
	case "liveness":
		return exitLiveness
	case "inconclusive":
		return exitInconclusive
	case reports.VerdictHarness:
		return reports.ExitHarness
	}
	return exitPass
}

// replayUntil stops the seed at step and prints what the world held.
func replayUntil(w io.Writer, t seedTarget, step uint64) error {
	cfg := t.sc.Config(t.seed, t.sc.Injector(t.seed, t.plan))
	st, err := sim.NewWorld(cfg).RunToStep(step)
	if err != nil {
		fmt.Fprintf(w, "the run failed before step %d: %v\n", step, err)
	}
	if st.Step < step {
		fmt.Fprintf(w, "the run ended at step %d, before step %d\n", st.Step, step)
	}
	fmt.Fprintf(w, "%s seed %d at step %d, t=%s\n\n", t.sc.Name, t.seed, st.Step, st.Time)
	section := func(header string, rows [][]string) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		_ = tw.Flush()
		fmt.Fprintln(w)
	}
	var rows [][]string
	for _, j := range st.Jobs {
		rows = append(rows, []string{j.ID, j.State, j.Version, j.Attempts, j.DispatchGen, j.DispatchID})
	}
	section("JOB\tSTATE\tVERSION\tATTEMPTS\tGEN\tDISPATCH ID", rows)
	rows = nil
	for _, l := range st.Locks {
		rows = append(rows, []string{l.Key, l.Token, l.TTL.String()})
	}
	section("LOCK\tTOKEN\tTTL", rows)
	rows = nil
	for _, m := range st.InFlight {
		rows = append(rows, []string{m.Subject, m.MsgID, m.JobID, m.Group, strconv.Itoa(m.Delivery), m.Since.String()})
	}
	section("IN FLIGHT\tMESSAGE ID\tJOB\tCONSUMER\tDELIVERY\tSINCE", rows)
	rows = nil
	for _, g := range st.Groups {
		status := "up"
		switch {
		case g.Crashed:
			status = "crashed"
		case g.PausedUntil > 0:
			status = "paused until " + g.PausedUntil.String()
		}
		rows = append(rows, []string{g.Name, status})
	}
	section("PROCESS\tSTATUS", rows)
	return nil
}
