package sim

import "testing"

func BenchmarkSeedNoFaults(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res := NewWorld(Config{Seed: uint64(i + 1)}).Run()
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}
