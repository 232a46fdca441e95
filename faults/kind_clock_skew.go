package faults

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

const clockSkewName = "ClockSkew"

// ClockSkew: each replica's clock runs ahead or behind by a drawn skew
// (Probability per replica, magnitude in [DurationMsMin, DurationMsMax], either
// sign). The world reads skews only when it is built, so the scenario passes
// Injector.ReplicaSkew(n) as sim.Config.ReplicaSkew; SetupWorld records the
// skews the world really has, and only if they are the ones handed out.
var ClockSkew = register(Kind{
	Name:        clockSkewName,
	Description: "a replica's clock is ahead or behind the others",
	Timing:      Setup,
	Defaults:    KindOptions{Probability: 1, DurationMsMin: 10, DurationMsMax: 2_000},
	draw:        drawClockSkew,
	apply:       checkClockSkew,
})

// drawSkew is replica i's skew: its own PRNG stream, so it does not depend on
// how many replicas there are.
func drawSkew(seed uint64, i int, ko KindOptions) time.Duration {
	rng := kindRand(seed, fmt.Sprintf("%s#%d", clockSkewName, i))
	on := rng.Float64() < ko.Probability
	mag := drawMs(rng, ko.DurationMsMin, ko.DurationMsMax)
	if rng.IntN(2) == 0 {
		mag = -mag
	}
	if !on {
		return 0
	}
	return time.Duration(mag) * time.Millisecond
}

func worldSkew(w *sim.World, i int) time.Duration {
	if s := w.Config().ReplicaSkew; i < len(s) {
		return s[i]
	}
	return 0
}

func drawClockSkew(in *Injector, w *sim.World, _ KindOptions, _ *rand.Rand) []PlanEntry {
	if !in.skewsHanded {
		return nil
	}
	var out []PlanEntry
	for i := range w.Replicas() {
		var want time.Duration
		if i < len(in.skews) {
			want = in.skews[i]
		}
		if worldSkew(w, i) != want {
			return nil // the world was not built with the skews handed out: none is ours
		}
		if want != 0 {
			out = append(out, PlanEntry{Kind: clockSkewName, Group: fmt.Sprintf("replica-%d", i+1), Setup: true,
				SkewMs: ms(want)})
		}
	}
	return out
}

// checkClockSkew asserts that the world runs with the skew the entry names: a
// replay whose world was built without Injector.ReplicaSkew would silently
// replay something else.
func checkClockSkew(_ *Injector, w *sim.World, e PlanEntry) {
	i, ok := replicaIndex(e.Group)
	want := time.Duration(e.SkewMs) * time.Millisecond
	if !ok || worldSkew(w, i) != want {
		panic(fmt.Sprintf("faults: the plan skews %s by %s but the world has %v: build sim.Config.ReplicaSkew from Injector.ReplicaSkew",
			e.Group, want, w.Config().ReplicaSkew))
	}
}
