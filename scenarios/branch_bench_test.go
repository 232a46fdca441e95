package scenarios

import (
	"testing"

	"github.com/dispatchsim/dispatchsim/sim"
)

// BenchmarkBranch measures what a branch costs against a full seed: the
// branch replays the seed's prefix with the trace muted and no checker,
// then runs and checks its own part. Branching at half the run, a branch
// costs what the seed does, less the prefix's trace formatting.
//
//	GOMAXPROCS=1 go test ./scenarios -run XXX -bench Branch -benchtime 20x
func BenchmarkBranch(b *testing.B) {
	sc, _ := Lookup("swarm")
	seed := sc.Seeds.First + 3
	steps := sc.Run(seed).Steps
	b.Run("seed", func(b *testing.B) {
		for range b.N {
			sc.Run(seed)
		}
	})
	for _, at := range []struct {
		name string
		step uint64
	}{{"branch-at-half", steps / 2}, {"branch-at-nine-tenths", steps * 9 / 10}} {
		v := sc.With(Variant{Branch: sim.Branch{Step: at.step, N: 1}})
		b.Run(at.name, func(b *testing.B) {
			for i := range b.N {
				v.With(Variant{Branch: sim.Branch{Step: at.step, N: uint64(i + 1)}}).Run(seed)
			}
		})
	}
	b.Run("prefix-to-half", func(b *testing.B) {
		for range b.N {
			cfg := sc.Config(seed, sc.Injector(seed, nil))
			cfg.Branch = sim.Branch{Step: steps / 2, N: 1}
			if _, err := sim.NewWorld(cfg).RunToStep(steps / 2); err != nil {
				b.Fatal(err)
			}
		}
	})
}
