package scenarios

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/sim"
)

// branchKeys are (seed, step, branch) keys spread over the swarm's seeds and
// over each seed's run: a tenth to nine tenths of its steps.
func branchKeys(t *testing.T, sc Scenario, n int) []struct {
	seed uint64
	b    sim.Branch
} {
	t.Helper()
	var out []struct {
		seed uint64
		b    sim.Branch
	}
	steps := map[uint64]uint64{}
	for i := range n {
		seed := sc.Seeds.First + uint64(i%5)
		if steps[seed] == 0 {
			steps[seed] = sc.Run(seed).Steps
		}
		k := steps[seed] * uint64(1+i%9) / 10
		out = append(out, struct {
			seed uint64
			b    sim.Branch
		}{seed, sim.Branch{Step: k, N: uint64(1 + i)}})
	}
	return out
}

// A branch's replay key reproduces it byte for byte: the same checksum and
// trace on a second run.
func TestBranchKeysReproduce(t *testing.T) {
	sc, _ := Lookup("swarm")
	for _, key := range branchKeys(t, sc, longtest.Pick(20, 100)) {
		v := sc.With(Variant{Branch: key.b})
		a, b := v.RunTraced(key.seed, nil), v.RunTraced(key.seed, nil)
		if a.Run.Err != nil {
			t.Fatalf("seed %d branch %s: %v", key.seed, key.b, a.Run.Err)
		}
		if a.Checksum != b.Checksum || !bytes.Equal(a.World.Trace().Bytes(), b.World.Trace().Bytes()) {
			t.Fatalf("seed %d branch %s: checksums %016x then %016x", key.seed, key.b, a.Checksum, b.Checksum)
		}
		// Replaying the recorded plan on the branch gives the same run.
		c := v.RunTraced(key.seed, &a.Plan)
		if c.Checksum != a.Checksum {
			t.Fatalf("seed %d branch %s: its plan replays to %016x, not %016x", key.seed, key.b, c.Checksum, a.Checksum)
		}
	}
}

// Branch 0 at any step is the seed itself; different branches of one step
// diverge from it and from each other, after a prefix that is the seed's.
func TestBranchesDiverge(t *testing.T) {
	sc, _ := Lookup("swarm")
	seed := sc.Seeds.First + 3
	plain := sc.RunTraced(seed, nil)
	zero := sc.With(Variant{Branch: sim.Branch{Step: plain.Steps / 2}}).RunTraced(seed, nil)
	if zero.Checksum != plain.Checksum || !bytes.Equal(zero.World.Trace().Bytes(), plain.World.Trace().Bytes()) {
		t.Fatalf("branch 0 is not the seed: %016x vs %016x", zero.Checksum, plain.Checksum)
	}
	k := plain.Steps / 10
	sums := map[uint64]uint64{plain.Checksum: 0}
	for n := uint64(1); n <= 5; n++ {
		o := sc.With(Variant{Branch: sim.Branch{Step: k, N: n}}).RunTraced(seed, nil)
		if prev, dup := sums[o.Checksum]; dup {
			t.Fatalf("branch %d/%d gave the checksum of branch %d", k, n, prev)
		}
		sums[o.Checksum] = n
		// The branch's trace is its own from step k on: past its first line
		// (the fork), it is not the seed's suffix.
		own := o.World.Trace().Bytes()
		if !bytes.HasPrefix(own, fmt.Appendf(nil, "step=%d t=", k)) {
			t.Fatalf("branch %d/%d: the trace does not begin at the fork: %.80q", k, n, own)
		}
		_, after, _ := bytes.Cut(own, []byte("\n"))
		if bytes.Contains(plain.World.Trace().Bytes(), after) {
			t.Errorf("branch %d/%d ran the seed's own course after step %d", k, n, k)
		}
		for i, s := range plain.Run.History.States {
			if s.Step > k {
				break
			}
			if i >= len(o.Run.History.States) || o.Run.History.States[i] != s {
				t.Fatalf("branch %d/%d: state change %d before the branch's step differs from the seed's", k, n, i)
			}
		}
	}
}

// A key whose step the seed never reaches is an error, not a quiet plain run.
func TestBranchBeyondTheRun(t *testing.T) {
	sc, _ := Lookup("swarm")
	o := sc.With(Variant{Branch: sim.Branch{Step: 1 << 40, N: 1}}).Run(sc.Seeds.First)
	if o.Run.Err == nil {
		t.Fatal("a branch past the run's last step ran without an error")
	}
}

// PCT runs are a function of the seed, differ from the uniform pick, and
// end (no livelock) across the swarm's seeds; --strategy swarm draws the
// strategy per seed.
func TestPCTRunsAreDeterministic(t *testing.T) {
	sc, _ := Lookup("swarm")
	pct := sc.With(Variant{Strategy: sim.Scheduling{Strategy: "pct", Depth: 3}})
	for i := range uint64(longtest.Pick(4, 40)) {
		seed := sc.Seeds.First + i
		a, b := pct.RunTraced(seed, nil), pct.RunTraced(seed, nil)
		if a.Run.Err != nil {
			t.Fatalf("seed %d under pct: %v", seed, a.Run.Err)
		}
		if a.Checksum != b.Checksum || !bytes.Equal(a.World.Trace().Bytes(), b.World.Trace().Bytes()) {
			t.Fatalf("seed %d under pct: checksums %016x then %016x", seed, a.Checksum, b.Checksum)
		}
		if a.Checksum == sc.Run(seed).Checksum {
			t.Fatalf("seed %d: pct ran the uniform pick's course", seed)
		}
	}
	drawn := map[string]bool{}
	swarm := sc.With(Variant{StrategySwarm: true})
	for i := range uint64(20) {
		drawn[swarm.SeedConfig(sc.Seeds.First+i).Scheduling.String()] = true
	}
	if len(drawn) < 2 {
		t.Fatalf("--strategy swarm drew only %v over 20 seeds", drawn)
	}
}
