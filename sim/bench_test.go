package sim

import (
	"testing"
	"time"

	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// BenchmarkSeed runs release-size seeds (50 jobs, 3 replicas, 4 workers, every
// fault point active) and reports seeds/s, simulated events/s, how much faster
// than real time the simulation runs, and store commands and scripts per seed
// and per submitted job (the store's Lua scripts dominate a seed's cost).
//
//	GOMAXPROCS=1 go test ./sim -run XXX -bench 'BenchmarkSeed$' -benchtime 40x
func BenchmarkSeed(b *testing.B) {
	var steps, cmds, scripts, jobs uint64
	var virtual time.Duration
	start := time.Now()
	for i := 0; i < b.N; i++ {
		seed := uint64(i + 1)
		res := NewWorld(Config{System: cordum.System{}, Seed: seed, Injector: newChaos(seed, 0.02),
			Workload: Workload{Jobs: 50, StatusReads: 20, CancelRate: 0.05}}).Run()
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		steps += res.Steps
		cmds += uint64(res.History.Redis.Commands)
		scripts += uint64(res.History.Redis.Scripts)
		jobs += uint64(len(res.History.Submitted))
		virtual += res.History.End
	}
	wall := time.Since(start)
	n := float64(b.N)
	b.ReportMetric(n/wall.Seconds(), "seeds/s")
	b.ReportMetric(float64(steps)/wall.Seconds(), "events/s")
	b.ReportMetric(virtual.Seconds()/wall.Seconds(), "sim/wall")
	b.ReportMetric(float64(cmds)/n, "cmds/seed")
	b.ReportMetric(float64(scripts)/n, "scripts/seed")
	if jobs > 0 {
		b.ReportMetric(float64(cmds)/float64(jobs), "cmds/job")
		b.ReportMetric(float64(scripts)/float64(jobs), "scripts/job")
	}
}
