package simrun

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/mutants"
	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

// The CLI is tested as a user drives it: the built binary, its exit code, its
// stdout and stderr, and the files it leaves.

var simrunBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "simrun-test-")
	if err != nil {
		panic(err)
	}
	simrunBin = filepath.Join(dir, "simrun")
	// Without VCS stamping, so --commit decides the recorded commit.
	build := []string{"build", "-buildvcs=false", "-o", simrunBin}
	if o := os.Getenv(mutants.TestOverlayEnv); o != "" {
		build = append(build, "-overlay", o) // a weakening under test reaches the built CLI too
	}
	if out, err := exec.Command("go", append(build, "../cmd/simrun")...).CombinedOutput(); err != nil {
		panic("build simrun: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// run is Run with the bundled systems, as cmd/simrun registers them.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Run(args, stdin, stdout, stderr, cordum.System{}, outbox.System{})
}

type result struct {
	code           int
	stdout, stderr string
}

func simrun(t *testing.T, bin string, args ...string) result {
	t.Helper()
	return simrunWith(t, bin, nil, args...)
}

// simrunWith runs bin in a fresh directory with extra environment variables.
func simrunWith(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run simrun: %v", err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// usageError asserts exit 2 with exactly one line on stderr naming the problem.
func usageError(t *testing.T, r result, mentions string) {
	t.Helper()
	require.Equal(t, exitUsage, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.Len(t, lines, 1, "one line on stderr: %q", r.stderr)
	require.True(t, strings.HasPrefix(lines[0], "simrun: "), lines[0])
	require.Contains(t, lines[0], mentions)
	require.NotContains(t, r.stderr, "panic")
}

func TestListShowsSuitesScenariosAndKinds(t *testing.T) {
	r := simrun(t, simrunBin, "list")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"release", "exploratory", "regression", "dispatch-rollback", "admission-crash",
		"GatewayCrashAfterReserve", "swarm"} {
		require.Contains(t, r.stdout, want)
	}
}

// list counts, per suite, the seeds the gate plans for --system: the cases
// that do not apply to the system are not planned, so not counted.
func TestListCountsTheSeedsTheGatePlansForTheSystem(t *testing.T) {
	for _, sys := range []sut.System{cordum.System{}, outbox.System{}} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"list", "--system", sys.Name()}, strings.NewReader(""), &stdout, &stderr), stderr.String())
		suite, _ := scenarios.LookupSuite("release")
		seeds, na := 0, 0
		for _, c := range suite.Cases {
			if c.For(sys).NotApplicable != "" {
				na++
				continue
			}
			seeds += len(c.Seeds)
		}
		row := regexp.MustCompile(`(?m)^release +(\d+)(?: \((\d+) cases n/a\))? `).FindStringSubmatch(stdout.String())
		require.NotNil(t, row, stdout.String())
		require.Equal(t, fmt.Sprint(seeds), row[1], sys.Name())
		if na > 0 {
			require.Equal(t, fmt.Sprint(na), row[2], sys.Name())
		} else {
			require.Empty(t, row[2], sys.Name())
		}
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitUsage, run([]string{"list", "--system", "outbx"}, strings.NewReader(""), &stdout, &stderr))
	require.Contains(t, stderr.String(), `did you mean "outbox"?`)
}

// compare on worker processes writes the table it writes in one process,
// figure for figure, but for seeds/s.
func TestCompareInParallelMatchesSequential(t *testing.T) {
	tables := map[string]map[string]any{}
	for _, j := range []string{"1", "2"} {
		out := filepath.Join(t.TempDir(), "cmp")
		r := simrun(t, simrunBin, "compare", "--suite", "regression", "--systems", "cordum,outbox", "-j", j, "--out", out)
		b, err := os.ReadFile(filepath.Join(out, "compare.json"))
		require.NoError(t, err, r.stderr)
		var table map[string]any
		require.NoError(t, json.Unmarshal(b, &table))
		worst := reports.Summary{Verdict: table["verdict"].(string)}
		require.Equal(t, worst.ExitCode(), r.code, "the worst system's verdict: %s", r.stderr)
		systems := table["systems"].([]any)
		require.Len(t, systems, 2)
		for _, s := range systems {
			col := s.(map[string]any)
			require.Positive(t, col["seeds_per_second"], "-j %s", j)
			delete(col, "seeds_per_second")
		}
		tables[j] = table
	}
	require.Equal(t, tables["1"], tables["2"])
}

// compare judges each system as run judges it, on the same seeds: each
// system's verdict and exit code in compare.json are run's, and compare exits
// with the worst of them.
func TestCompareExitsWithTheWorstVerdict(t *testing.T) {
	seeds := []string{"--scenario", "dispatch-rollback", "--seeds", "1000..1001"}
	out := filepath.Join(t.TempDir(), "cmp")
	r := simrun(t, simrunBin, append([]string{"compare", "--systems", "cordum,outbox", "-j", "1", "--out", out}, seeds...)...)
	b, err := os.ReadFile(filepath.Join(out, "compare.json"))
	require.NoError(t, err, r.stderr)
	var table reports.Comparison
	require.NoError(t, json.Unmarshal(b, &table))
	require.Len(t, table.Systems, 2)
	// Codes from harmless to worst: pass, incomplete, inconclusive, liveness, safety.
	rank := map[int]int{exitPass: 0, reports.ExitIncomplete: 1, exitInconclusive: 2, exitLiveness: 3, exitSafety: 4}
	worst := exitPass
	for _, col := range table.Systems {
		ran := simrun(t, simrunBin, append([]string{"run", "--system", col.System, "-j", "1", "--out", filepath.Join(t.TempDir(), "run")}, seeds...)...)
		require.Equal(t, ran.code, col.ExitCode, "%s: compare's verdict %s is run's\n%s", col.System, col.Verdict, ran.stdout)
		if rank[col.ExitCode] > rank[worst] {
			worst = col.ExitCode
		}
	}
	require.Equal(t, worst, r.code, r.stdout+r.stderr)
	require.Equal(t, worst, table.ExitCode())
	require.Contains(t, r.stdout, "cordum vs outbox: suite scenario:dispatch-rollback, 2 seeds per system")
	page, err := os.ReadFile(filepath.Join(out, "compare.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), "<h1>cordum vs outbox</h1>")
	if table.Systems[0].Verdict != table.Systems[1].Verdict {
		require.Contains(t, r.stdout, "The verdicts differ")
		require.Contains(t, string(page), `id="differ"`)
	}
}

func TestBadInputsAreOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notADir, []byte("x"), 0o644))
	foreign := filepath.Join(dir, "foreign.json")
	require.NoError(t, os.WriteFile(foreign, []byte(`{"version": 99, "seed": 1, "entries": []}`), 0o644))
	garbage := filepath.Join(dir, "garbage.json")
	require.NoError(t, os.WriteFile(garbage, []byte(`not json`), 0o644))
	wrongSeed := filepath.Join(dir, "wrong-seed.json")
	require.NoError(t, os.WriteFile(wrongSeed, []byte(`{"version": 1, "seed": 7, "entries": []}`), 0o644))

	cases := []struct {
		name     string
		args     []string
		mentions string
	}{
		{"unknown command", []string{"fly"}, "unknown command"},
		{"unknown flag", []string{"run", "--fast"}, "unknown flag"},
		{"unknown scenario", []string{"run", "--scenario", "nope"}, `unknown scenario "nope"`},
		{"unknown suite", []string{"run", "--suite", "nightly"}, `unknown suite "nightly"`},
		{"malformed seed", []string{"run", "--scenario", "swarm", "--seed", "12x"}, "--seed"},
		{"negative seed", []string{"run", "--scenario", "swarm", "--seed", "-1"}, "--seed"},
		{"backwards range", []string{"run", "--scenario", "swarm", "--seeds", "5..3"}, "ends before it starts"},
		{"not a range", []string{"run", "--scenario", "swarm", "--seeds", "5-9"}, "not a range"},
		{"huge range", []string{"run", "--scenario", "swarm", "--seeds", "0..99999999"}, "more than"},
		{"seed and seeds", []string{"run", "--seed", "1", "--seeds", "1..2"}, "exclusive"},
		{"suite and scenario", []string{"run", "--suite", "release", "--scenario", "swarm"}, "exclusive"},
		{"bad shard", []string{"run", "--shard", "3/2"}, "--shard"},
		{"shard not a fraction", []string{"run", "--shard", "two"}, "--shard"},
		{"zero jobs", []string{"run", "-j", "0"}, "-j 0"},
		{"compare zero jobs", []string{"compare", "-j", "0"}, "-j 0"},
		{"bad budget", []string{"run", "--budget", "soon"}, "budget"},
		{"unwritable out", []string{"run", "--scenario", "swarm", "--seed", "1", "--out", filepath.Join(notADir, "sub")}, "--out"},
		{"replay without seed", []string{"replay", "--scenario", "swarm"}, "--seed"},
		{"replay unknown scenario", []string{"replay", "--scenario", "nope", "--seed", "1"}, "unknown scenario"},
		{"replay unreadable plan", []string{"replay", "--scenario", "swarm", "--seed", "1", "--plan", filepath.Join(dir, "missing.json")}, "--plan"},
		{"replay foreign plan", []string{"replay", "--scenario", "swarm", "--seed", "1", "--plan", foreign}, "format version 99"},
		{"replay garbage plan", []string{"replay", "--scenario", "swarm", "--seed", "1", "--plan", garbage}, "--plan"},
		{"replay plan of another seed", []string{"replay", "--scenario", "swarm", "--seed", "1", "--plan", wrongSeed}, "recorded for seed 7"},
		{"replay bad checksum", []string{"replay", "--scenario", "swarm", "--seed", "1", "--checksum", "xyz"}, "--checksum"},
		{"shrink bad seed", []string{"shrink", "--scenario", "swarm", "--seed", "0xZZ"}, "--seed"},
		{"merge without summary", []string{"report", "merge", "--out", filepath.Join(dir, "m"), dir}, "no summary.json"},
		{"merge no dirs", []string{"report", "merge"}, "requires at least 1 arg"},
		{"jobs not a number", []string{"run", "-j", "two"}, `--jobs "two": want a whole number`},
		{"budget without unit", []string{"run", "--budget", "10"}, `--budget "10": want a duration with its unit`},
		{"near flag", []string{"run", "--sed", "4"}, "did you mean --seed?"},
		{"near scenario", []string{"run", "--scenario", "swarmm"}, `did you mean "swarm"?`},
		{"near suite", []string{"run", "--suite", "releas"}, `did you mean "release"?`},
		{"near system", []string{"run", "--system", "outbx"}, `did you mean "outbox"?`},
		{"replay from nowhere", []string{"replay", "--from", filepath.Join(dir, "gone")}, "no such folder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usageError(t, simrun(t, simrunBin, c.args...), c.mentions)
		})
	}
}

// A passing run writes summary.json, index.html and JUnit, and exits 0.
func TestRunWritesOutputsAndPasses(t *testing.T) {
	out := t.TempDir()
	junit := filepath.Join(out, "junit.xml")
	r := simrun(t, simrunBin, "run", "--scenario", "no-pool-mapping-static", "--count", "2", "-j", "1",
		"--out", out, "--junit", junit)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "no-pool-mapping-static")
	require.Contains(t, r.stdout, "pass, 2 of 2 seeds")

	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.Equal(t, "pass", sum.Verdict)
	require.Len(t, sum.Seeds, 2)
	require.Regexp(t, `^[0-9a-f]{16}$`, sum.Seeds[0].Checksum)
	require.FileExists(t, filepath.Join(out, "index.html"))

	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		XMLName xml.Name
	}
	require.NoError(t, xml.Unmarshal(b, &suites), "JUnit parses")
}

// -j 2 runs seeds in worker processes; the result equals a -j 1 run's.
func TestParallelWorkersAgreeWithOneProcess(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Log("one core: the processes still run, just not at once")
	}
	one, two := t.TempDir(), t.TempDir()
	args := []string{"run", "--scenario", "lock-expiry", "--count", "3", "--json"}
	r1 := simrun(t, simrunBin, append(args, "-j", "1", "--out", one)...)
	r2 := simrun(t, simrunBin, append(args, "-j", "2", "--out", two)...)
	require.Equal(t, 0, r1.code, r1.stderr)
	require.Equal(t, 0, r2.code, r2.stderr)
	var s1, s2 reports.Summary
	require.NoError(t, json.Unmarshal([]byte(r1.stdout), &s1), "--json prints summary.json")
	require.NoError(t, json.Unmarshal([]byte(r2.stdout), &s2))
	checksums := func(s reports.Summary) map[uint64]string {
		m := map[uint64]string{}
		for _, r := range s.Seeds {
			m[r.Seed] = r.Checksum
		}
		return m
	}
	require.Equal(t, checksums(s1), checksums(s2), "same seeds, same bytes, whatever the process")
}

// Two shards merged cover the suite exactly once; a shard alone reports the
// rest as missing.
func TestShardsMergeIntoTheWhole(t *testing.T) {
	base := t.TempDir()
	a, b, merged := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "merged")
	args := []string{"run", "--scenario", "no-pool-mapping-race", "--count", "3", "-j", "1"}
	require.Equal(t, 0, simrun(t, simrunBin, append(args, "--shard", "1/2", "--out", a)...).code)
	require.Equal(t, 0, simrun(t, simrunBin, append(args, "--shard", "2/2", "--out", b)...).code)

	shardA, err := reports.ReadSummary(filepath.Join(a, "summary.json"))
	require.NoError(t, err)
	require.Len(t, shardA.Seeds, 2, "shard 1/2 of 3 seeds: the 1st and 3rd")
	require.Equal(t, "1/2", shardA.Shard)

	r := simrun(t, simrunBin, "report", "merge", "--out", merged, a, b)
	require.Equal(t, 0, r.code, r.stderr)
	sum, err := reports.ReadSummary(filepath.Join(merged, "summary.json"))
	require.NoError(t, err)
	require.Len(t, sum.Seeds, 3)
	require.Empty(t, sum.Cases[0].Missing)
	require.FileExists(t, filepath.Join(merged, "index.html"))

	// The same shard twice is a duplicate, not a bigger suite.
	usageError(t, simrun(t, simrunBin, "report", "merge", "--out", merged, a, a), "")
}

// Merged verdicts set the exit code: 1 for safety, 3 for liveness, 4 for an
// inconclusive linearizability check.
func TestMergeExitCodeFollowsVerdict(t *testing.T) {
	for _, c := range []struct {
		verdict string
		code    int
	}{{"safety", exitSafety}, {"liveness", exitLiveness}, {"inconclusive", exitInconclusive}, {"pass", exitPass}} {
		t.Run(c.verdict, func(t *testing.T) {
			dir := t.TempDir()
			seed := reports.SeedResult{Scenario: "swarm", Seed: 9000, Checksum: "0123456789abcdef", Verdict: c.verdict,
				Linearizability: "ok", Replay: "simrun replay --scenario swarm --seed 9000"}
			spec := reports.CaseSpec{Scenario: "swarm", Seeds: []uint64{9000}}
			sum := reports.Build("simrun test", "scenario:swarm", "", []reports.CaseSpec{spec}, []reports.SeedResult{seed}, 1)
			require.NoError(t, reports.WriteJSONAtomic(filepath.Join(dir, "summary.json"), sum))
			r := simrun(t, simrunBin, "report", "merge", "--out", filepath.Join(dir, "merged"), dir)
			require.Equal(t, c.code, r.code, r.stdout+r.stderr)
		})
	}
}

// Replay holds a seed to the checksum its run recorded; a different one is
// exit 5. --until-step prints the world at that step.
func TestReplayVerifiesChecksum(t *testing.T) {
	out := t.TempDir()
	require.Equal(t, 0, simrun(t, simrunBin, "run", "--scenario", "fail-closed-read", "--seed", "2003", "-j", "1", "--out", out).code)

	r := simrun(t, simrunBin, "replay", "--scenario", "fail-closed-read", "--seed", "2003", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "matches "+filepath.Join(out, "summary.json"))

	r = simrun(t, simrunBin, "replay", "--scenario", "fail-closed-read", "--seed", "2003", "--checksum", "0000000000000000")
	require.Equal(t, exitNondeterministic, r.code)
	require.Contains(t, r.stderr, "does not reproduce")

	r = simrun(t, simrunBin, "replay", "--scenario", "fail-closed-read", "--seed", "0x7d3", "--until-step", "300")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"at step 300", "JOB", "LOCK", "IN FLIGHT", "PROCESS", "replica-1"} {
		require.Contains(t, r.stdout, want)
	}

	r = simrun(t, simrunBin, "replay", "--scenario", "fail-closed-read", "--seed", "2003", "--trace", "--out", out)
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "heal phase", "--trace prints the trace")
}

// A defect put back into the engine: the 429 path keeps its reservation. The
// regression suite fails with a liveness violation (exit 3), writes the
// seed's artifacts and the replay line, and shrink finds that no fault is
// needed.
func TestEngineDefectFailsWithArtifactsAndShrinks(t *testing.T) {
	longtest.Require(t, "builds a mutant and shrinks")
	bin := buildMutant(t, "429-leaves-key-reserved")
	out := t.TempDir()
	r := simrun(t, bin, "run", "--suite", "regression", "-j", "2", "--out", out)
	require.Equal(t, exitLiveness, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "FAIL idempotency-reservation seed 92500 (liveness)")
	require.Contains(t, r.stdout, "run_key_blocked")
	dir := filepath.Join(out, "idempotency-reservation", "92500")
	require.Regexp(t, `(?m)^  replay: simrun replay --from `+regexp.QuoteMeta(dir)+`$`, r.stdout)
	// Options come before the violations, the replay line last.
	require.Less(t, strings.Index(r.stdout, "workflow runs:"), strings.Index(r.stdout, "run_key_blocked"))
	for _, f := range []string{"trace.log", "plan.json", "history.json", "seed.json", "report.html"} {
		require.FileExists(t, filepath.Join(dir, f))
	}

	r = simrun(t, bin, "replay", "--scenario", "idempotency-reservation", "--seed", "92500", "--out", out)
	require.Equal(t, exitLiveness, r.code, r.stderr)
	require.Contains(t, r.stdout, "matches "+filepath.Join(dir, "seed.json"))

	r = simrun(t, bin, "shrink", "--scenario", "idempotency-reservation", "--seed", "92500", "--out", out, "--budget", "1m")
	require.Equal(t, exitLiveness, r.code, r.stderr)
	require.Contains(t, r.stdout, "shrunk to 0 of")
	require.FileExists(t, filepath.Join(dir, "plan.min.json"))
	require.FileExists(t, filepath.Join(dir, "min", "report.html"))

	// The real engine does not reproduce the defect's recorded run.
	r = simrun(t, simrunBin, "replay", "--scenario", "idempotency-reservation", "--seed", "92500", "--out", out)
	require.Equal(t, exitNondeterministic, r.code)
}

// mutantBins are the mutant binaries built so far, by mutant: several tests
// share one build.
var (
	mutantMu   sync.Mutex
	mutantBins = map[string]string{}
)

// buildMutant builds simrun with a mutant of the catalog put into the engine
// through an overlay: the tree is untouched.
func buildMutant(t *testing.T, name string) string {
	t.Helper()
	return buildMutantOf(t, name, "../cmd/simrun", "simrun")
}

// buildMutantOf builds the main package pkg as bin with the mutant.
func buildMutantOf(t *testing.T, name, pkg, bin string) string {
	t.Helper()
	mutantMu.Lock()
	defer mutantMu.Unlock()
	if built, ok := mutantBins[name+" "+pkg]; ok {
		return built
	}
	m, ok := mutants.Lookup(name)
	require.True(t, ok, "mutant %s", name)
	dir := filepath.Join(filepath.Dir(simrunBin), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	overlay, err := m.Overlay("..", dir)
	require.NoError(t, err)
	bin = filepath.Join(dir, bin)
	overlay, err = mutants.MergeOverlays(overlay, os.Getenv(mutants.TestOverlayEnv), dir)
	require.NoError(t, err)
	out, err := exec.Command("go", "build", "-buildvcs=false", "-overlay", overlay, "-o", bin, pkg).CombinedOutput()
	require.NoError(t, err, string(out))
	mutantBins[name+" "+pkg] = bin
	return bin
}

// Printed lines name a command that runs: a binary by its name, and one go
// run built in its temporary folder by the go run command that builds it
// again (the folder is gone when the line is pasted).
func TestProgramNameIsACommandThatRuns(t *testing.T) {
	require.Equal(t, "gate", programName("/usr/local/bin/gate"))
	require.Equal(t, "simrun", programName("simrun"))
	require.Equal(t, "exe", programName("/home/me/exe"), "a folder named exe outside go's build folders is a binary")
	goRun := programName("/tmp/go-build2760353446/b001/exe/gate")
	require.True(t, strings.HasPrefix(goRun, "go run "), goRun)
	require.NotContains(t, goRun, "go-build")
}

// claimedQueue is the bundled engine under another name whose dispatched
// state is CLAIMED: what list prints for a system of other state names.
type claimedQueue struct{ cordum.System }

func (claimedQueue) Name() string { return "claimed-queue" }

func (q claimedQueue) Spec(o sut.Options) sut.Spec {
	s := q.System.Spec(o)
	s.Dispatched = "CLAIMED"
	return s
}

// list describes each scenario in --system's own state names.
func TestListDescribesScenariosInTheSystemsStateNames(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run([]string{"list", "--system", "claimed-queue"}, strings.NewReader(""), &stdout, &stderr, cordum.System{},
		claimedQueue{})
	require.Equal(t, 0, code, stderr.String())
	scenariosPart := stdout.String()[strings.Index(stdout.String(), "SCENARIOS"):]
	require.Contains(t, scenariosPart, "SCENARIOS (in claimed-queue's state names)")
	require.Contains(t, scenariosPart, "CLAIMED is written")
	require.NotContains(t, scenariosPart, cordum.System{}.Spec(sut.Options{}).Dispatched+" ")
}
