package simrun

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/reports"
	"github.com/dispatchsim/dispatchsim/scenarios"
)

// The warm-up only fills the coverage map; at its end, what one seed alone
// reached is that seed's discovery; afterwards a seed branches from each
// moment no earlier run reached, at most perRun of them, earliest first.
func TestCampaignBranchesFromFirstReachedMoments(t *testing.T) {
	c := newCampaign(2)
	c.warmup = 2
	seed := func(s uint64, keys ...string) {
		var ms []moment
		for i, k := range keys {
			ms = append(ms, moment{Key: k, Step: uint64(10 * (i + 1))})
		}
		c.observe(io.Discard, task{Scenario: "swarm", Seed: s}, ms)
	}
	seed(1, "a", "b")
	require.Empty(t, c.pending, "the warm-up holds its runs")
	seed(2, "a", "c")
	require.Equal(t, []string{"1:20/1", "1:20/2", "2:20/1", "2:20/2"}, keys(c.pending), "b and c: one seed each")
	c.pending = nil

	seed(3, "a", "b", "d", "e", "f", "g")
	require.Equal(t, []string{"3:30/1", "3:30/2", "3:40/1", "3:40/2", "3:50/1", "3:50/2"}, keys(c.pending),
		"three discoveries at most, earliest first")
	require.Equal(t, 5, c.discoveries)

	br := task{Scenario: "swarm", Seed: 3, Branch: "30/1"}
	c.observe(io.Discard, br, []moment{{Key: "h", Step: 80}})
	require.Len(t, c.pending, 6, "a branch counts its moments but does not branch again")
	require.Equal(t, 1, c.coverage["h"])

	branches, seeds := c.round(4, []task{{Seed: 4}, {Seed: 5}})
	require.Len(t, branches, 3, "branches take three quarters of a round")
	require.Len(t, seeds, 1)
	branches, seeds = c.round(4, nil)
	require.Len(t, branches, 3, "with no fresh seeds left, branches take it all")
	require.Empty(t, seeds)
}

// A moment stays a discovery while few seeds reached it: at most rareShare
// of the seeds so far, and perKey seeds at most branch from it; a moment
// that turns common stops.
func TestCampaignBranchesAgainWhileRare(t *testing.T) {
	c := newCampaign(1)
	c.warmup, c.rareShare, c.perKey = 1, 0.1, 2
	run := func(s uint64, names ...string) []string {
		c.pending = nil
		var ms []moment
		for i, k := range names {
			ms = append(ms, moment{Key: k, Step: uint64(10 * (i + 1))})
		}
		c.observe(io.Discard, task{Scenario: "swarm", Seed: s}, ms)
		return keys(c.pending)
	}
	require.Equal(t, []string{"1:10/1"}, run(1, "common"), "the warm-up's one seed")
	for s := uint64(2); s <= 19; s++ {
		require.Empty(t, run(s, "common"), "seed %d: common is no longer rare", s)
	}
	require.Equal(t, []string{"20:20/1"}, run(20, "common", "rare"), "rare: first of 20 seeds")
	require.Equal(t, []string{"21:20/1"}, run(21, "common", "rare"), "rare: 2 of 21 seeds, within 10%")
	require.Empty(t, run(22, "common", "rare"), "rare was branched from by two seeds: its share")
	require.Equal(t, 2, c.branchedFrom["rare"])
	require.Equal(t, 1, c.branchedFrom["common"])
}

func keys(ts []task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%d:%s", t.Seed, t.Branch))
	}
	return out
}

func TestParseVariant(t *testing.T) {
	v, err := parseVariant("1200/3", "pct:2")
	require.NoError(t, err)
	require.Equal(t, " --branch 1200/3 --strategy pct:2", v.Flags())
	require.Equal(t, filepath.Join("swarm", "7", "branch-1200-3-strategy-pct-2"), artifactDir("swarm", 7, v))
	zero, err := parseVariant("1200/0", "uniform")
	require.NoError(t, err)
	require.True(t, zero.IsZero(), "branch 0 and the uniform pick are the seed itself")
	require.Equal(t, filepath.Join("swarm", "7"), artifactDir("swarm", 7, zero))
	sw, err := parseVariant("", "swarm")
	require.NoError(t, err)
	require.Equal(t, " --strategy swarm", sw.Flags())
	for _, bad := range [][2]string{{"12", ""}, {"", "pct:0"}, {"", "random"}} {
		_, err := parseVariant(bad[0], bad[1])
		require.Error(t, err, "%q", bad)
	}
	r := reports.SeedResult{Branch: "1200/3", Strategy: "pct:2"}
	require.True(t, sameVariant(r, v))
	require.False(t, sameVariant(r, zero))
}

// A branch's replay key reproduces through the CLI: replay holds it to a
// second run of itself and names the key; the printed line of a failing
// branch carries --branch.
func TestReplayBranchKey(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"replay", "--scenario", "swarm", "--seed", "9003", "--branch", "3000/2", "--out", t.TempDir()},
		nil, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	require.Contains(t, out.String(), "swarm seed 9003 --branch 3000/2: ")
	require.Contains(t, out.String(), "matches a second run")

	out.Reset()
	errOut.Reset()
	code = run([]string{"replay", "--scenario", "swarm", "--seed", "9003", "--branch", "3000"}, nil, &out, &errOut)
	require.Equal(t, exitUsage, code)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(errOut.String()), "\n")+1, errOut.String())

	o := scenarioRun(t, "swarm", 9003, mustBranch(t, "3000/2"))
	require.Equal(t, "simrun replay --scenario swarm --seed 9003 --branch 3000/2", replaySeed("", o.Scenario, o.Seed, o.Variant))
	require.Equal(t, "3000/2", o.Plan.Branch, "the plan records the branch it was drawn on")
}

func scenarioRun(t *testing.T, name string, seed uint64, v scenarios.Variant) *scenarios.Outcome {
	t.Helper()
	sc, ok := scenarios.Lookup(name)
	require.True(t, ok)
	return sc.With(v).Run(seed)
}

func mustBranch(t *testing.T, s string) scenarios.Variant {
	t.Helper()
	v, err := parseVariant(s, "")
	require.NoError(t, err)
	return v
}
