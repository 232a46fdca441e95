package simrun

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/reports"
)

// failing is a seed of scenario that failed first with checker.
func failing(scenario string, seed uint64, checker string) reports.SeedResult {
	return reports.SeedResult{Scenario: scenario, Seed: seed, Verdict: "safety", Linearizability: "ok",
		Violations: []reports.Violation{{Checker: checker}}}
}

// The signature is the scenario, the checker and the shrunk plan's distinct
// fault kinds, sorted: where and how often they fired is not part of it.
func TestExploreSignatureIsScenarioCheckerAndShrunkKinds(t *testing.T) {
	plan := faults.Plan{Entries: []faults.PlanEntry{{Kind: "StoreOutage"}, {Kind: "AckLost", Step: 9},
		{Kind: "StoreOutage", Step: 40}}}
	kinds, sig := signature("swarm", "no_resurrection", plan)
	require.Equal(t, []string{"AckLost", "StoreOutage"}, kinds)
	require.Equal(t, "swarm / no_resurrection / [AckLost StoreOutage]", sig)
	_, empty := signature("swarm", "job_terminal", faults.Plan{})
	require.Equal(t, "swarm / job_terminal / []", empty)
}

// Failing seeds group by scenario and first checker; each group's first
// seed is shrunk once, and its bucket is new unless it is a pinned
// regression seed or an earlier night's findings name its signature.
func TestExploreBucketsFailuresBySignature(t *testing.T) {
	results := []reports.SeedResult{
		failing("swarm", 100, "exactly_once_publish"),
		{Scenario: "swarm", Seed: 101, Verdict: "pass", Linearizability: "ok"},
		failing("swarm", 102, "no_resurrection"),
		failing("swarm", 103, "exactly_once_publish"),
		failing("world-swarm", 104, "exactly_once_publish"),
		failing("swarm", 103661, "job_terminal"), // pinned: redispatch-outside-dedup-window
	}
	kindsOf := map[uint64][]string{100: {"PublishFailsAfterStored"}, 102: {"AckLost"}, 104: {"ClockSkew"},
		103661: {"PublishFailsAfterStored"}}
	var shrunk []uint64
	shrink := func(r reports.SeedResult) Finding {
		shrunk = append(shrunk, r.Seed)
		var plan faults.Plan
		for _, k := range kindsOf[r.Seed] {
			plan.Entries = append(plan.Entries, faults.PlanEntry{Kind: k})
		}
		fd := Finding{Scenario: r.Scenario, Checker: primaryChecker(r), Seed: r.Seed}
		fd.Kinds, fd.Signature = signature(fd.Scenario, fd.Checker, plan)
		return fd
	}
	known := map[string]string{"swarm / no_resurrection / [AckLost]": "found 2026-11-20, seed 7"}

	got := bucketFailures(io.Discard, results, known, shrink)
	require.Equal(t, []uint64{100, 102, 104, 103661}, shrunk, "one shrink per group, its first seed")
	require.Len(t, got, 4)

	require.Equal(t, "swarm / exactly_once_publish / [PublishFailsAfterStored]", got[0].Signature)
	require.Equal(t, []uint64{100, 103}, got[0].Seeds)
	require.True(t, got[0].New)

	require.False(t, got[1].New, "an earlier night reported it")
	require.Equal(t, "found 2026-11-20, seed 7", got[1].KnownAs)

	require.Equal(t, "world-swarm / exactly_once_publish / [ClockSkew]", got[2].Signature, "another scenario, another bucket")
	require.True(t, got[2].New)

	require.False(t, got[3].New, "a pinned regression seed is not new")
	require.Equal(t, "regression redispatch-outside-dedup-window", got[3].KnownAs)
}

// A checker's first fire counts every violation of a failing run, not only
// the one its bucket is named after, with the runs and run seconds to it.
func TestExploreFirstFiredCountsEveryViolation(t *testing.T) {
	second := failing("swarm", 12, "dlq_announced")
	second.Violations = append(second.Violations, reports.Violation{Checker: "no_resurrection"})
	results := []reports.SeedResult{
		{Scenario: "swarm", Seed: 10, Verdict: "pass", Linearizability: "ok", WallSeconds: 1},
		{Scenario: "swarm", Seed: 11, Verdict: "pass", Linearizability: "ok", WallSeconds: 2},
		func() reports.SeedResult { r := second; r.WallSeconds = 3; return r }(),
		func() reports.SeedResult { r := failing("swarm", 12, "no_resurrection"); r.Branch = "90/1"; return r }(),
	}
	got := firstFired(results)
	require.Equal(t, map[string]FirstFire{
		"dlq_announced":   {Run: 3, Seconds: 6, Seed: 12},
		"no_resurrection": {Run: 3, Seconds: 6, Seed: 12},
	}, got)
}

// explore runs the system --system names, not the build's default: every
// seed, the summary and the findings' replay lines say so.
func TestExploreRunsTheNamedSystem(t *testing.T) {
	out := filepath.Join(t.TempDir(), "explore")
	r := simrun(t, simrunBin, "explore", "--system", "outbox", "--scenario", "swarm", "--from", "7000000", "--count", "3",
		"--budget", "2m", "-j", "1", "--shrink-budget", "0", "--out", out)
	require.Contains(t, []int{exitPass, exitSafety}, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "swarm seeds of system outbox from 7000000")
	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.Equal(t, "outbox", sum.System)
	require.Len(t, sum.Seeds, 3)
	for _, s := range sum.Seeds {
		require.Equal(t, "outbox", s.System, "seed %d", s.Seed)
	}
	b, err := os.ReadFile(filepath.Join(out, "findings.json"))
	require.NoError(t, err)
	var found Findings
	require.NoError(t, json.Unmarshal(b, &found))
	for _, fd := range found.Findings {
		require.Contains(t, fd.Replay, "--system outbox", fd.Signature)
	}
}
