package scenarios

import (
	"testing"

	"github.com/dispatchsim/dispatchsim/sim"
)

// BenchmarkBranch measures what a branch costs against a full seed: the
// branch replays the seed's prefix with the trace muted and no checker,
// then runs and checks its own part. Each branch draws its own course after
// the fork, so steps/op says how long its runs were.
//
//	GOMAXPROCS=1 go test ./scenarios -run XXX -bench Branch -benchtime 20x
func BenchmarkBranch(b *testing.B) {
	sc, _ := Lookup("swarm")
	seed := sc.Seeds.First + 3
	steps := sc.Run(seed).Steps
	b.Run("seed", func(b *testing.B) {
		var n uint64
		for range b.N {
			n += sc.Run(seed).Steps
		}
		b.ReportMetric(float64(n)/float64(b.N), "steps/op")
	})
	for _, at := range []struct {
		name string
		step uint64
	}{{"branch-at-half", steps / 2}, {"branch-at-nine-tenths", steps * 9 / 10}} {
		v := sc.With(Variant{Branch: sim.Branch{Step: at.step, N: 1}})
		b.Run(at.name, func(b *testing.B) {
			var n uint64
			for i := range b.N {
				n += v.With(Variant{Branch: sim.Branch{Step: at.step, N: uint64(i + 1)}}).Run(seed).Steps
			}
			b.ReportMetric(float64(n)/float64(b.N), "steps/op")
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
