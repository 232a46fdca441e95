package main

import (
	"encoding/json"
	"fmt"
	"io"
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

func resolveTarget(scenario, seed, planFile string) (seedTarget, error) {
	if scenario == "" || seed == "" {
		return seedTarget{}, fmt.Errorf("--scenario and --seed are required")
	}
	sc, ok := scenarios.Lookup(scenario)
	if !ok {
		return seedTarget{}, fmt.Errorf("unknown scenario %q (simrun list shows them)", scenario)
	}
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
		t.plan = &p
	}
	return t, nil
}

func newReplayCmd() *cobra.Command {
	var scenario, seed, planFile, out, checksum string
	var untilStep uint64
	var trace bool
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Re-run one seed, verify its checksum (exit 5 on a mismatch), and write its report",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := resolveTarget(scenario, seed, planFile)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if cmd.Flags().Changed("until-step") {
				return replayUntil(cmd.OutOrStdout(), t, untilStep)
			}
			return replay(cmd.OutOrStdout(), t, out, checksum, trace)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&scenario, "scenario", "", "scenario of the seed")
	fl.StringVar(&seed, "seed", "", "seed to replay (decimal, 0x-hex or a 40-hex commit id)")
	fl.StringVar(&planFile, "plan", "", "force this recorded fault plan (plan.json, or a shrunk plan.min.json)")
	fl.Uint64Var(&untilStep, "until-step", 0, "stop at this step and print the world's state: jobs, locks, in-flight messages")
	fl.BoolVar(&trace, "trace", false, "print the whole trace")
	fl.StringVar(&out, "out", "simrun-out", "where the run recorded the seed, and where a failing replay writes its artifacts")
	fl.StringVar(&checksum, "checksum", "", "expected checksum (16 hex digits); default: the one the run recorded under --out")
	return cmd
}

// replay re-runs the seed and holds it to its recorded checksum, or, with no
// record, to a second run of itself.
func replay(w io.Writer, t seedTarget, out, want string, trace bool) error {
	recorded, from, err := recordedChecksum(out, t, want)
	if err != nil {
		return usageErrorf("%v", err)
	}
	o := t.sc.RunTraced(t.seed, t.plan)
	got := fmt.Sprintf("%016x", o.Checksum)
	if recorded == "" {
		again := t.sc.RunTraced(t.seed, t.plan)
		recorded, from = fmt.Sprintf("%016x", again.Checksum), "a second run"
	}
	if trace {
		if _, err := w.Write(o.World.Trace().Bytes()); err != nil {
			return err
		}
	}
	if got != recorded {
		return &exitError{code: exitNondeterministic,
			err: fmt.Errorf("%s seed %d: checksum %s, but %s gave %s: the replay does not reproduce the run (different code, or nondeterminism)",
				t.sc.Name, t.seed, got, from, recorded)}
	}
	fmt.Fprintf(w, "%s seed %d: %d steps, checksum %s matches %s\n", t.sc.Name, t.seed, o.Steps, got, from)
	res := reports.SeedResultOf(o, t.sc.ExpectViolation)
	fmt.Fprintf(w, "verdict: %s\n", res.Verdict)
	for _, v := range res.Violations {
		fmt.Fprintf(w, "  %s/%s %s step=%d: %s\n", v.Layer, v.Checker, v.Job, v.Step, v.Message)
	}
	if !passed(res) {
		dir := filepath.Join(out, artifactDir(t.sc.Name, t.seed))
		if t.plan != nil {
			dir = filepath.Join(dir, "replay")
		}
		res.Artifacts = dir
		if err := writeArtifacts(dir, t.sc, o, res, reports.Meta{}); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, "report.html"))
	}
	return exitWith(verdictCode(res.Verdict))
}

// recordedChecksum finds the checksum to hold a replay to: --checksum, else
// the seed's seed.json, else summary.json, under out. A replay with a forced
// plan has no record unless --checksum names one.
func recordedChecksum(out string, t seedTarget, want string) (sum, from string, err error) {
	if want != "" {
		if _, err := strconv.ParseUint(want, 16, 64); err != nil || len(want) != 16 {
			return "", "", fmt.Errorf("--checksum %q: want 16 hex digits", want)
		}
		return want, "--checksum", nil
	}
	if t.plan != nil {
		return "", "", nil
	}
	seedFile := filepath.Join(out, artifactDir(t.sc.Name, t.seed), "seed.json")
	if b, err := os.ReadFile(seedFile); err == nil {
		var r reports.SeedResult
		if json.Unmarshal(b, &r) == nil && r.Checksum != "" {
			return r.Checksum, seedFile, nil
		}
	}
	sumFile := filepath.Join(out, "summary.json")
	if _, err := os.Stat(sumFile); err != nil {
		return "", "", nil
	}
	s, err := reports.ReadSummary(sumFile)
	if err != nil {
		return "", "", err
	}
	for _, r := range s.Seeds {
		if r.Scenario == t.sc.Name && r.Seed == t.seed {
			return r.Checksum, sumFile, nil
		}
	}
	return "", "", nil
}

func verdictCode(verdict string) int {
	switch verdict {
	case "safety":
		return exitSafety
	case "liveness":
		return exitLiveness
	case "inconclusive":
		return exitInconclusive
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
