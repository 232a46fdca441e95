package reports

import (
	"fmt"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/scenarios"
)

// SummaryVersion is the format version of summary.json. Bump it whenever a
// field changes meaning: Merge and ReadSummary refuse any other version.
const SummaryVersion = 1

// Verdicts of a seed, a case and a summary. VerdictExpected is a seed's only:
// it found the violation its scenario exists to demonstrate.
const (
	VerdictPass         = "pass"
	VerdictSafety       = "safety"
	VerdictLiveness     = "liveness"
	VerdictInconclusive = "inconclusive"
	VerdictExpected     = "expected"
)

// Summary is summary.json: one suite run (or one shard of it).
type Summary struct {
	Version     int          `json:"version"`
	Tool        string       `json:"tool"`            // e.g. "simrun dev"
	Suite       string       `json:"suite"`           // suite name or "scenario:<name>"
	Shard       string       `json:"shard,omitempty"` // "2/4" when sharded; "" merged or unsharded
	Cases       []CaseResult `json:"cases"`
	Seeds       []SeedResult `json:"seeds"`
	Coverage    Coverage     `json:"coverage"`
	Verdict     string       `json:"verdict"` // worst over cases: pass | safety | liveness | inconclusive
	WallSeconds float64      `json:"wall_seconds"`
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
}

// CaseResult is a case's verdict over the seeds the summary holds.
type CaseResult struct {
	CaseSpec
	Passed  bool     `json:"passed"`
	Verdict string   `json:"verdict"`
	Failed  []uint64 `json:"failed,omitempty"` // seeds that failed
	// NeverFired lists declared kinds that never fired, plus "expected
	// violation X" when the expected violation was not found.
	NeverFired    []string       `json:"never_fired,omitempty"`
	ExpectedFound bool           `json:"expected_found,omitempty"`
	Fired         map[string]int `json:"fired"`
	// Missing are seeds of the case with no result (a partial, sharded
	// summary); coverage is not judged while any are missing.
	Missing []uint64 `json:"missing,omitempty"`
}

// SeedResult is one seed's run.
type SeedResult struct {
	Scenario              string         `json:"scenario"`
	Finding               string         `json:"finding,omitempty"`
	Seed                  uint64         `json:"seed"`
	Checksum              string         `json:"checksum"` // 16 lowercase hex digits
	Steps                 uint64         `json:"steps"`
	Verdict               string         `json:"verdict"` // pass | safety | liveness | inconclusive | expected
	Linearizability       string         `json:"linearizability"`
	Violations            []Violation    `json:"violations,omitempty"`
	Fired                 map[string]int `json:"fired,omitempty"`
	Branches              map[string]int `json:"branches,omitempty"`
	TimeoutNeverPublished int            `json:"timeout_never_published"`
	WallSeconds           float64        `json:"wall_seconds"`
	CheckSeconds          float64        `json:"check_seconds"`
	// Artifacts is the seed's directory relative to the output directory, for
	// failing seeds (report.html lives there).
	Artifacts string `json:"artifacts,omitempty"`
	Replay    string `json:"replay"`
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
func SeedResultOf(o *scenarios.Outcome, expect string) SeedResult {
	r := SeedResult{
		Scenario:        o.Scenario,
		Seed:            o.Seed,
		Checksum:        fmt.Sprintf("%016x", o.Checksum),
		Steps:           o.Steps,
		Verdict:         seedVerdict(o.Result, expect),
		Linearizability: string(o.Result.Linearizability),
		Fired:           copyCounts(o.Fired),
		Branches:        copyCounts(o.Branches),
		WallSeconds:     o.Wall.Seconds(),
		CheckSeconds:    o.Check.Seconds(),
		Replay:          scenarios.ReplayLine(o.Scenario, o.Seed),
	}
	r.TimeoutNeverPublished = o.Result.Figures.TimeoutNeverPublished
	for _, v := range o.Result.Violations {
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
	safety, liveness := false, false
	for _, v := range rest {
		switch v.Layer {
		case checker.LayerLiveness:
			liveness = true
		default: // assumptions, invariants, linearization, and any layer this build does not know
			safety = true
		}
	}
	switch {
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
	}
	return VerdictPass
}

// verdictRank orders verdicts from harmless to worst; an unknown verdict is
// treated as the worst, so a typo can never turn a gate green.
func verdictRank(v string) int {
	switch v {
	case VerdictPass, VerdictExpected:
		return 0
	case VerdictInconclusive:
		return 1
	case VerdictLiveness:
		return 2
	}
	return 3
}

// worse returns the worse of two verdicts, mapping "expected" to "pass".
func worse(a, b string) string {
	if a == VerdictExpected {
		a = VerdictPass
	}
	if b == VerdictExpected {
		b = VerdictPass
	}
	if verdictRank(b) > verdictRank(a) {
		return b
	}
	return a
}

// failing reports whether a seed verdict fails its case.
func failing(verdict string) bool { return verdictRank(verdict) > 0 }

// ExitCode is simrun's exit code for the summary's verdict (DESIGN §8): 0 pass,
// 1 safety, 3 liveness, 4 inconclusive.
func (s *Summary) ExitCode() int {
	switch s.Verdict {
	case VerdictPass:
		return 0
	case VerdictLiveness:
		return 3
	case VerdictInconclusive:
		return 4
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
