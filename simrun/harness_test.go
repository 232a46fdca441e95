package simrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// harnessHook is the engine under another name, used only by this test,
// whose replicas carry a hook into the simulator: on some seeds (a draw from
// the replica's own stream) one breaks a simulator invariant 30 s into the
// run, as the store's snapshot did on a Redis type it could not copy.
type harnessHook struct{ cordum.System }

func (harnessHook) Name() string { return "harness-hook" }

func (h harnessHook) StartReplica(p sut.Ports, o sut.Options) (sut.Replica, error) {
	if p.Random.Uint64()%6 == 0 {
		p.Spawn("harness-hook", func(ctx context.Context) {
			if p.Clock.Sleep(ctx, 30*time.Second) == nil {
				kernel.Breachf("test hook: the simulated store's snapshot lost a key")
			}
		})
	}
	return h.System.StartReplica(p, o)
}

// A seed whose run breaks the simulator fails as the harness's (verdict
// harness, exit 7), with the panic's value, stack and the trace up to it;
// the process goes on and judges the other seeds; and every failing seed
// gets its folder: trace, plan, history, seed.json and the report.
func TestAHarnessFaultFailsItsSeedAsTheHarnesssAndTheRunGoesOn(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run([]string{"run", "--system", "harness-hook", "--scenario", "no-pool-mapping-static", "--seeds", "3100..3107",
		"-j", "1", "--out", out}, nil, &stdout, &stderr, cordum.System{}, harnessHook{})
	require.Equal(t, reports.ExitHarness, code, stdout.String()+stderr.String())

	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.Equal(t, reports.VerdictHarness, sum.Verdict)
	require.Len(t, sum.Seeds, 8, "every seed ran")
	require.Zero(t, sum.NotRun)
	var harness, judged []uint64
	for _, r := range sum.Seeds {
		if r.Verdict != reports.VerdictHarness {
			require.Equal(t, reports.VerdictPass, r.Verdict, "seed %d: %v", r.Seed, r.Violations)
			judged = append(judged, r.Seed)
			continue
		}
		harness = append(harness, r.Seed)
		require.Len(t, r.Violations, 1, "seed %d: nothing else is judged", r.Seed)
		v := r.Violations[0]
		require.Equal(t, string(checker.LayerHarness), v.Layer)
		require.Equal(t, "harness_fault", v.Checker)
		require.NotZero(t, v.Step)
		require.InDelta(t, 30, v.TimeSeconds, 1, "the hook breaks 30 s in")
		require.Contains(t, v.Message, "test hook: the simulated store's snapshot lost a key")
		require.Contains(t, v.Message, "\nstack:\n", "the stack")
		require.Contains(t, v.Message, "harness_test.go")
		require.Contains(t, v.Message, "\ntrace tail:\n", "the trace up to the fault")

		dir := filepath.Join(out, r.Artifacts)
		require.Equal(t, filepath.Join("no-pool-mapping-static", r.Replay[strings.LastIndex(r.Replay, "/")+1:]), r.Artifacts)
		for _, f := range []string{"trace.log", "plan.json", "history.json", "seed.json", "report.html"} {
			require.FileExists(t, filepath.Join(dir, f))
		}
		trace, err := os.ReadFile(filepath.Join(dir, "trace.log"))
		require.NoError(t, err)
		tail := v.Message[strings.Index(v.Message, "\ntrace tail:\n")+len("\ntrace tail:\n"):]
		require.True(t, bytes.HasSuffix(trace, []byte(tail+"\n")), "the trace stops at the fault")
		page, err := os.ReadFile(filepath.Join(dir, "report.html"))
		require.NoError(t, err)
		require.Contains(t, string(page), "harness_fault")
		require.Contains(t, string(page), "the harness failed the run, not the system: harness fault in actor replica-")
	}
	t.Log(stdout.String())
	require.NotEmpty(t, harness, "some seeds break the harness")
	require.NotEmpty(t, judged, "the others are judged")
	require.Contains(t, stdout.String(), "harness_fault")
	require.Contains(t, stdout.String(), "(stack and trace tail in seed.json and report.html)")
	require.NotContains(t, stdout.String(), "goroutine ", "the console gets one line per finding, not the stack")

	// Its replay reproduces the harness fault and exits with the harness's
	// code, not a pass.
	var rout, rerr bytes.Buffer
	code = Run([]string{"replay", "--from", filepath.Join(out, "no-pool-mapping-static", fmt.Sprint(harness[0]))}, nil,
		&rout, &rerr, cordum.System{}, harnessHook{})
	require.Equal(t, reports.ExitHarness, code, rout.String()+rerr.String())
}

// noTerminalStates declares a spec the checker cannot judge by (no terminal
// state): its check panics, outside the world's run.
type noTerminalStates struct{ cordum.System }

func (noTerminalStates) Name() string { return "no-terminal-states" }

func (s noTerminalStates) Spec(o sut.Options) sut.Spec {
	spec := s.System.Spec(o)
	spec.Terminal = nil
	return spec
}

// A panic that escapes the world's run (here in the check) still fails only
// its seed, as the harness's: the worker process that runs execute goes on.
// An artifacts task says it has nothing to write.
func TestAPanicOutsideTheWorldsRunFailsOnlyItsSeed(t *testing.T) {
	prev := systems
	t.Cleanup(func() { systems = prev })
	require.NoError(t, register([]sut.System{cordum.System{}, noTerminalStates{}}))
	task := task{System: "no-terminal-states", Scenario: "no-pool-mapping-static", Seed: 3100}
	run, err := execute(task, t.TempDir())
	require.NoError(t, err)
	r := run.Result
	require.Equal(t, reports.VerdictHarness, r.Verdict)
	require.Equal(t, "no-pool-mapping-static", r.Scenario)
	require.Equal(t, uint64(3100), r.Seed)
	require.Len(t, r.Violations, 1)
	require.Equal(t, string(checker.LayerHarness), r.Violations[0].Layer)
	require.Contains(t, r.Violations[0].Message, "names no terminal states")
	require.Contains(t, r.Violations[0].Message, "checker.newRun")
	require.Contains(t, r.Replay, "--system no-terminal-states --scenario no-pool-mapping-static --seed 3100")

	task.Artifacts = true
	_, err = execute(task, t.TempDir())
	require.ErrorContains(t, err, "no-pool-mapping-static seed 3100: no artifacts: harness fault")
}

// A hunt (--until) is for the system's defects: a harness fault is no kill,
// even for --until any.
func TestAHarnessFaultIsNoHuntedKill(t *testing.T) {
	r := reports.SeedResult{Verdict: reports.VerdictHarness, Violations: []reports.Violation{
		{Layer: string(checker.LayerHarness), Checker: "harness_fault"}}}
	require.Empty(t, firedOneOf(r, []string{anyChecker}))
	require.Empty(t, firedOneOf(r, []string{"harness_fault"}))
	r.Verdict, r.Violations[0].Layer, r.Violations[0].Checker = reports.VerdictSafety, string(checker.LayerInvariants), "placement"
	require.Equal(t, "placement", firedOneOf(r, []string{anyChecker}))
}
