package reports

import (
	"fmt"

	"github.com/dispatchsim/dispatchsim/checker"
)

// SummaryVersion is the format version of summary.json. Bump it whenever a
// field changes meaning: Merge and ReadSummary refuse any other version.
const SummaryVersion = 2

// Verdicts of a seed, a case and a summary. VerdictExpected is a seed's only:
// it found the violation its scenario exists to demonstrate.
const (
	VerdictPass         = "pass"
	VerdictSafety       = "safety"
	VerdictLiveness     = "liveness"
	VerdictInconclusive = "inconclusive"
	VerdictExpected     = "expected"
	// VerdictEnvironment is a seed's only: every violation follows the
	// environment breaking its own contract (the store forgot acknowledged
	// writes), which the scenario declared; the system is not blamed.
	VerdictEnvironment = "environment"
	// VerdictIncomplete is a summary's or a case's: seeds it was to run have
	// no result (a budget, a dead worker, a missing shard). Never a pass.
	VerdictIncomplete = "incomplete"
	// VerdictInterrupted is a summary's: SIGINT or SIGTERM stopped the run.
	VerdictInterrupted = "interrupted"
	// VerdictHarness is a seed the harness itself failed (a panic the
	// simulator raised, a simulator invariant broken): a failure, never a
	// pass, and never the system's safety or liveness violation.
	VerdictHarness = "harness"
)

// Summary is summary.json: one suite run (or one shard of it).
type Summary struct {
	Version    int        `json:"version"`
	Tool       string     `json:"tool"` // e.g. "simrun dev"
	Provenance Provenance `json:"provenance"`
	Suite      string     `json:"suite"`            // suite name or "scenario:<name>"
	System     string     `json:"system,omitempty"` // the system under test ("" before systems had names: cordum)
	Shard      string     `json:"shard,omitempty"`  // "2/4" when sharded; "" merged or unsharded
	ShardIndex int        `json:"shard_index"`      // 1-based; 1 of 1 unsharded or merged
	ShardCount int        `json:"shard_count"`
	// SuiteSeeds and SeedList describe the whole run over every shard: the
	// seed count and a fingerprint of the ordered seed list, so a merge can
	// tell shards of one run from shards of another.
	SuiteSeeds int    `json:"suite_seeds"`
	SeedList   string `json:"seed_list"`
	// Planned is how many seeds this summary was to run (its shard's share);
	// NotRun how many of them have no result, and Stopped why.
	Planned int    `json:"planned"`
	NotRun  int    `json:"not_run"`
	Stopped string `json:"stopped,omitempty"`
	// IncompleteAccepted records an explicit --allow-incomplete: unrun seeds
	// do not fail the verdict (exploration with a budget).
	IncompleteAccepted bool `json:"incomplete_accepted,omitempty"`
	// InterruptedBy is the signal that stopped the run (SIGINT, SIGTERM).
	InterruptedBy string       `json:"interrupted_by,omitempty"`
	Cases         []CaseResult `json:"cases"`
	// NotApplicable are the suite's cases whose point is a feature the
	// system lacks: run on no seed, neither a pass nor a fail, with why.
	NotApplicable []NotApplicableCase `json:"not_applicable,omitempty"`
	Seeds         []SeedResult        `json:"seeds"`
	Groups        []FailureGroup      `json:"groups,omitempty"`
	Coverage      Coverage            `json:"coverage"`
	// Verdict is the gate's: interrupted, else the worst over cases (safety,
	// liveness, harness, inconclusive), else incomplete when seeds did not
	// run, else pass.
	Verdict     string  `json:"verdict"`
	WallSeconds float64 `json:"wall_seconds"`
	// Live names the real servers of a live run (simrun run --live): not a
	// simulation, not deterministic, its checksums reproduce nothing. Empty
	// for every simulated run.
	Live string `json:"live,omitempty"`
}

// NotApplicableCase is a case that cannot apply to the system under test.
type NotApplicableCase struct {
	Case   string `json:"case"` // CaseName: "regression/<finding>" or the scenario
	Reason string `json:"reason"`
}

// Provenance says which build produced an output, so a replay can tell
// whether it runs the same code.
type Provenance struct {
	Commit       string `json:"commit"`                  // "" when unknown
	CommitSource string `json:"commit_source,omitempty"` // vcs, --commit or GITHUB_SHA
	Dirty        bool   `json:"dirty"`                   // built from a tree with uncommitted changes
	GoVersion    string `json:"go_version"`
	Version      string `json:"simrun_version"`
}

// String is the provenance in one line, e.g. "dev @ 3131d93 (dirty), go1.26.8".
func (p Provenance) String() string {
	commit := p.Commit
	if commit == "" {
		commit = "unknown commit"
	} else if len(commit) > 12 {
		commit = commit[:12]
	}
	if p.Dirty {
		commit += " (dirty)"
	}
	return fmt.Sprintf("%s @ %s, %s", p.Version, commit, p.GoVersion)
}

// FailureGroup is the failing seeds that share a scenario and the checker of
// their first finding (FirstChecker: job-level findings before counter
// mismatches): one broken engine fails many seeds the same way.
type FailureGroup struct {
	Scenario  string `json:"scenario"`
	Checker   string `json:"checker"` // first finding's checker, or "linearizability <outcome>"
	Verdict   string `json:"verdict"` // the worst verdict in the group
	Count     int    `json:"count"`
	FirstSeed uint64 `json:"first_seed"`
	Finding   string `json:"finding,omitempty"`
	Replay    string `json:"replay"` // the first seed's replay line
}

// CaseSpec is what a case declared: a scenario over seeds, what must fire.
type CaseSpec struct {
	Scenario string   `json:"scenario"`
	Finding  string   `json:"finding,omitempty"` // regression seed's name
	Seeds    []uint64 `json:"seeds"`
	// Declared are the fault kinds the scenario declares; each must fire at
	// least once over the case.
	Declared []string `json:"declared,omitempty"`
	// ExpectViolation is the checker that must fire on at least one seed.
	ExpectViolation string `json:"expect_violation,omitempty"`
	// Sometimes are branches some seed must reach (scenarios.Case.Sometimes).
	Sometimes []string `json:"sometimes,omitempty"`
}

// CaseResult is a case's verdict over the seeds the summary holds.
type CaseResult struct {
	CaseSpec
	Passed  bool     `json:"passed"`
	Verdict string   `json:"verdict"`
	Failed  []uint64 `json:"failed,omitempty"` // seeds that failed
	// Environment are seeds whose every violation followed the environment
	// breaking its contract: not failures of the system, and listed apart.
	Environment []uint64 `json:"environment,omitempty"`
	// NeverFired lists declared kinds that never fired, plus "expected
	// violation X" when the expected violation was not found.
	NeverFired    []string       `json:"never_fired,omitempty"`
	ExpectedFound bool           `json:"expected_found,omitempty"`
	Fired         map[string]int `json:"fired"`
	// Missing are seeds of the case with no result (a partial, sharded
	// summary); coverage is not judged while any are missing.
	Missing []uint64 `json:"missing,omitempty"`
	// NotRun are the missing seeds this summary was to run itself: they make
	// the case incomplete.
	NotRun []uint64 `json:"not_run,omitempty"`
}

// SeedResult is one seed's run.
type SeedResult struct {
	System   string `json:"system,omitempty"`
	Scenario string `json:"scenario"`
	Finding  string `json:"finding,omitempty"`
	Seed     uint64 `json:"seed"`
	// Branch ("K/B") and Strategy complete the replay key of a run that is
	// not the seed's own timeline.
	Branch          string `json:"branch,omitempty"`
	Strategy        string `json:"strategy,omitempty"`
	Checksum        string `json:"checksum"` // 16 lowercase hex digits
	Steps           uint64 `json:"steps"`
	Verdict         string `json:"verdict"` // pass | safety | liveness | inconclusive | expected | environment | harness
	Linearizability string `json:"linearizability"`
	// Violations are in reading order (ReadingOrder): job-level findings
	// first, earliest step first, counter and metric mismatches after.
	Violations            []Violation    `json:"violations,omitempty"`
	Fired                 map[string]int `json:"fired,omitempty"`
	Branches              map[string]int `json:"branches,omitempty"`
	TimeoutNeverPublished int            `json:"timeout_never_published"`
	// ClockExcuseSeconds is the replicas' clock spread the timing checks
	// forgave a system that measures on its replicas' clocks.
	ClockExcuseSeconds float64 `json:"clock_excuse_seconds,omitempty"`
	WallSeconds        float64 `json:"wall_seconds"`
	CheckSeconds       float64 `json:"check_seconds"`
	// Artifacts is the seed's directory relative to the output directory, for
	// failing seeds (report.html lives there).
	Artifacts string `json:"artifacts,omitempty"`
	Replay    string `json:"replay"`
	// Provenance is set in a seed's own seed.json, not in summary.json (which
	// has one for the whole run).
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Violation is one broken property, as checker.Violation.
type Violation struct {
	Layer       string   `json:"layer"`
	Checker     string   `json:"checker"`
	Job         string   `json:"job"`
	Step        uint64   `json:"step"`
	TimeSeconds float64  `json:"time_seconds"`
	Message     string   `json:"message"`
	FaultSteps  []uint64 `json:"fault_steps,omitempty"`
}

// Coverage is how often each fault kind fired and each risky branch ran.
type Coverage struct {
	Fired    map[string]int `json:"fired"`
	Branches map[string]int `json:"branches"`
}

// SeedResultOf converts one run. expect is the checker the scenario expects to
// fire ("" for none). Finding and Artifacts are the caller's to fill in.
func SeedResultOf(o Run, expect string) SeedResult {
	r := SeedResult{
		System:          o.System,
		Scenario:        o.Scenario,
		Seed:            o.Seed,
		Branch:          o.Branch,
		Strategy:        o.Strategy,
		Checksum:        fmt.Sprintf("%016x", o.Checksum),
		Steps:           o.Steps,
		Verdict:         seedVerdict(o.Result, expect),
		Linearizability: string(o.Result.Linearizability),
		Fired:           copyCounts(o.Fired),
		Branches:        copyCounts(o.Branches),
		WallSeconds:     o.Wall.Seconds(),
		CheckSeconds:    o.Check.Seconds(),
		Replay:          o.Replay,
	}
	r.TimeoutNeverPublished = o.Result.Figures.TimeoutNeverPublished
	r.ClockExcuseSeconds = o.Result.Figures.ClockExcuse.Seconds()
	for _, v := range readingOrder(o.Result.Violations) {
		r.Violations = append(r.Violations, Violation{Layer: string(v.Layer), Checker: v.Checker, Job: v.Job,
			Step: v.Step, TimeSeconds: v.Time.Seconds(), Message: v.Message, FaultSteps: v.FaultSteps})
	}
	return r
}

// seedVerdict judges a run. The expected checker's violations are set aside
// first, and with them the violations they explain: those in the same layer on
// a job the expected checker named (a dispatch stored twice by construction is
// also executed twice: exactly_once_execution on that job is the same
// finding). Anything else still fails the seed for what it is.
func seedVerdict(res *checker.Result, expect string) string {
	explained := map[string]checker.Layer{} // job -> layer of the expected violation
	expected := false
	if expect != "" {
		for _, v := range res.Violations {
			if v.Checker == expect {
				expected = true
				if v.Job != "" {
					explained[v.Job] = v.Layer
				}
			}
		}
	}
	var rest []checker.Violation
	for _, v := range res.Violations {
		if expected && (v.Checker == expect || (v.Job != "" && explained[v.Job] == v.Layer)) {
			continue
		}
		rest = append(rest, v)
	}
	harness, safety, liveness, environment := false, false, false, false
	for _, v := range rest {
		switch v.Layer {
		case checker.LayerHarness:
			harness = true
		case checker.LayerEnvironment:
			environment = true
		case checker.LayerLiveness:
			liveness = true
		default: // assumptions, invariants, linearization, and any layer this build does not know
			safety = true
		}
	}
	switch {
	case harness: // what else the run shows is not evidence against the system
		return VerdictHarness
	case safety || res.Linearizability == checker.LinIllegal:
		return VerdictSafety
	case liveness:
		return VerdictLiveness
	case res.Linearizability != checker.LinOk:
		// Unknown is never a pass; skipped means an assumption failed, which
		// the violations above already said, so this is a check that could
		// not decide.
		return VerdictInconclusive
	case expected:
		return VerdictExpected
	case environment:
		return VerdictEnvironment
	}
	return VerdictPass
}

// verdictRank orders verdicts from harmless to worst; an unknown verdict is
// treated as the worst, so a typo can never turn a gate green.
func verdictRank(v string) int {
	switch v {
	case VerdictPass, VerdictExpected, VerdictEnvironment:
		return 0
	case VerdictIncomplete:
		return 1
	case VerdictInconclusive:
		return 2
	case VerdictHarness:
		// A seed the harness could not judge; a seed the system failed
		// elsewhere in the run is the news the gate must carry first.
		return 3
	case VerdictLiveness:
		return 4
	}
	return 5
}

// worse returns the worse of two verdicts, mapping "expected" and
// "environment" to "pass".
func worse(a, b string) string {
	if a == VerdictExpected || a == VerdictEnvironment {
		a = VerdictPass
	}
	if b == VerdictExpected || b == VerdictEnvironment {
		b = VerdictPass
	}
	if verdictRank(b) > verdictRank(a) {
		return b
	}
	return a
}

// failing reports whether a seed verdict fails its case.
func failing(verdict string) bool { return verdictRank(verdict) > 0 }

// Exit codes of the verdicts, beside usage (2) and non-deterministic replay (5).
const (
	ExitIncomplete         = 6
	ExitHarness            = 7
	ExitInterruptedSIGINT  = 130
	ExitInterruptedSIGTERM = 143
)

// ExitCode is simrun's exit code for the summary's verdict (DESIGN §8): 0 pass,
// 1 safety, 3 liveness, 4 inconclusive, 6 incomplete, 7 harness, 130 or 143
// interrupted by SIGINT or SIGTERM (128 + the signal, as a shell reports it).
func (s *Summary) ExitCode() int {
	switch s.Verdict {
	case VerdictPass:
		return 0
	case VerdictLiveness:
		return 3
	case VerdictInconclusive:
		return 4
	case VerdictIncomplete:
		return ExitIncomplete
	case VerdictHarness:
		return ExitHarness
	case VerdictInterrupted:
		if s.InterruptedBy == "SIGINT" {
			return ExitInterruptedSIGINT
		}
		return ExitInterruptedSIGTERM
	}
	return 1
}

func copyCounts(m map[string]int) map[string]int {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, n := range m {
		out[k] = n
	}
	return out
}
