package faults

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim"
)

func swarmOf(seed uint64) Options { return Swarm(rand.New(rand.NewPCG(seed, 0x5ea))) }

func TestSwarmIsPerSeed(t *testing.T) {
	require.Equal(t, swarmOf(42), swarmOf(42), "same seed, same draws")
	mixes := map[string]bool{}
	on := map[string]int{}
	const seeds = 400
	for s := uint64(1); s <= seeds; s++ {
		o := swarmOf(s)
		require.NoError(t, o.Validate())
		mixes[fmt.Sprint(o.Summary())] = true
		for _, k := range Catalog() {
			ko, ok := o.Kinds[k.Name]
			if !ok {
				continue
			}
			on[k.Name]++
			if k.Timing == AtPoint {
				require.LessOrEqual(t, ko.Probability, k.Defaults.Probability)
				require.GreaterOrEqual(t, ko.Probability, k.Defaults.Probability/32)
			}
		}
	}
	require.Len(t, mixes, seeds, "every seed draws its own mix")
	for _, k := range Catalog() {
		share := float64(on[k.Name]) / seeds
		require.InDelta(t, max(k.swarmChance, 0), share, 0.1, "%s on in %.2f of seeds", k.Name, share)
	}
}

// reads are points every store kind that reads may fire at.
func reads(n int) []*sim.Point {
	out := make([]*sim.Point, n)
	for i := range out {
		out[i] = redisPoint("replica-1", "hget", false, fmt.Sprintf("job:j-%d", i), "state")
	}
	return out
}

func countFired(in *Injector, points []*sim.Point) map[string]int {
	got := map[string]int{}
	for _, p := range points {
		if f, ok := in.At(p); ok {
			got[f.Kind]++
		}
	}
	return got
}

func TestBudgetCapsFaults(t *testing.T) {
	always := KindOptions{Probability: 1}
	both := Options{}.Enable(StoreLatency, always).Enable(StoreReadFails, always)

	o := both
	o.Budget = Budget{FaultsMax: 7}
	require.Equal(t, map[string]int{"StoreLatency": 7}, countFired(New(o, 1), reads(100)), "total cap")

	o.Budget = Budget{PerKindMax: 3}
	require.Equal(t, map[string]int{"StoreLatency": 3, "StoreReadFails": 3}, countFired(New(o, 1), reads(100)),
		"per-kind cap; the next kind gets its turn")

	o = Options{Budget: Budget{PerKindMax: 3}}.Enable(StoreLatency, KindOptions{Probability: 1, CountMax: 5})
	require.Equal(t, map[string]int{"StoreLatency": 5}, countFired(New(o, 1), reads(100)), "CountMax overrides")

	o = Options{Budget: Budget{FaultsMax: -1, PerKindMax: -1}}.Enable(StoreReadFails, always)
	require.Equal(t, map[string]int{"StoreReadFails": 100}, countFired(New(o, 1), reads(100)), "negative: no cap")

	// Crash kinds share one cap.
	o = Options{}.Enable(ReplicaCrash, always).Enable(ReplicaCrashAfterApply, always)
	var writes []*sim.Point
	for i := range 50 {
		writes = append(writes, redisPoint(fmt.Sprintf("replica-%d", i%3+1), "hset", true, "job:j-1", "f", "v"))
	}
	got := countFired(New(o, 1), writes)
	require.Equal(t, map[string]int{"ReplicaCrash": 2}, got, "two replica crashes at most, by default")
	o.Budget.ReplicaCrashesMax = 3
	require.Equal(t, map[string]int{"ReplicaCrash": 3}, countFired(New(o, 1), writes))

	o = Options{}.Enable(ReplicaPauseBeyondLockTTL, always)
	var fenced []*sim.Point
	for range 10 {
		fenced = append(fenced, transitionPoint("replica-1", "SCHEDULED", "DISPATCHED", "tok"))
	}
	in := New(o, 1)
	require.Equal(t, map[string]int{"ReplicaPauseBeyondLockTTL": 2}, countFired(in, fenced))
	for _, e := range in.Plan().Entries {
		require.Greater(t, e.DurationMs, int64(60_000), "a pause outlasts the 60s lock TTL")
		require.LessOrEqual(t, e.DurationMs, int64(120_000))
	}

	o = Options{}.Enable(WorkerCrashMidJob, always)
	var done []*sim.Point
	for i := range 10 {
		done = append(done, &sim.Point{Kind: sim.PointWorker, Group: "worker-w1", JobID: fmt.Sprintf("j-%d", i)})
	}
	require.Equal(t, map[string]int{"WorkerCrashMidJob": 3}, countFired(New(o, 1), done))
}

// No window outlasts the budget, whatever the kind's knobs ask for: an outage
// always ends.
func TestBudgetBoundsWindows(t *testing.T) {
	long := KindOptions{DurationMsMin: 600_000, DurationMsMax: 900_000}
	o := Options{}.Enable(StoreOutage, long).Enable(StoreReadsFailWritesWork, long)
	require.EqualValues(t, 60_000, New(o, 1).Options().Kinds[StoreOutage.Name].DurationMsMax)
	o.Budget.WindowMsMax = 20_000
	inj := New(o, 5)
	res := run(t, shortConfig(5, inj))
	requireAllTerminal(t, res)
	plan := inj.Plan()
	require.Len(t, plan.Entries, 2)
	for _, e := range plan.Entries {
		require.True(t, e.Setup)
		require.EqualValues(t, 20_000, e.DurationMs, e.Kind)
		require.Positive(t, inj.Fired()[e.Kind], "%s fired inside its window", e.Kind)
	}
}

func TestOptionsValidate(t *testing.T) {
	require.NoError(t, Options{}.Validate())
	require.ErrorContains(t, Options{Kinds: map[string]KindOptions{"Nope": {}}}.Validate(), `"Nope" is not in the catalog`)
	require.ErrorContains(t, Only().Enable(AckLost, KindOptions{Probability: 2}).Validate(), "outside [0, 1]")
	require.ErrorContains(t, Only().Enable(DeliveryDelayed, KindOptions{DurationMsMin: 5, DurationMsMax: 1}).Validate(), "DurationMsMin")
	require.Panics(t, func() { New(Options{Kinds: map[string]KindOptions{"Nope": {}}}, 1) })

	// Zero knobs take the kind's defaults; the caller's map is not changed.
	o := Only(DeliveryDelayed)
	got := New(o, 1).Options()
	require.Equal(t, DeliveryDelayed.Defaults, got.Kinds[DeliveryDelayed.Name])
	require.Equal(t, KindOptions{}, o.Kinds[DeliveryDelayed.Name])
	require.Equal(t, 100, got.Budget.FaultsMax)
	require.Contains(t, o.Summary()[0], "DeliveryDelayed p=0.02 duration_ms=[1000,60000]")
}

// The zero Options inject nothing, even where every kind would apply.
func TestZeroOptionsInjectNothing(t *testing.T) {
	in := New(Options{}, 1)
	for _, p := range namedPoints() {
		_, ok := in.At(p)
		require.False(t, ok)
	}
	require.Empty(t, in.Fired())
	require.Empty(t, in.Plan().Entries)
}

// A focused branch favours its job's points: twenty times the kind's
// probability there, up to a ceiling, and the kind's own elsewhere; the
// seed itself and an unfocused branch are unchanged.
func TestFocusedBranchFavoursItsJob(t *testing.T) {
	o := Options{}.Enable(AckLost, KindOptions{Probability: 0.01})
	o.Budget = Budget{FaultsMax: 100_000, PerKindMax: 100_000}
	points := func(job string) []*sim.Point {
		out := make([]*sim.Point, 5000)
		for i := range out {
			out[i] = busPoint(sim.PointAck, "worker-w1", "worker.w1.jobs", job)
		}
		return out
	}
	fired := func(b sim.Branch, job string) int {
		in := New(o, 7)
		in.Fork(b)
		return countFired(in, points(job))["AckLost"]
	}
	plain := fired(sim.Branch{Step: 10, N: 1}, "j-1")
	focused := fired(sim.Branch{Step: 10, N: 1, Focus: "j-1"}, "j-1")
	other := fired(sim.Branch{Step: 10, N: 1, Focus: "j-1"}, "j-2")
	require.InDelta(t, 50, plain, 25, "an unfocused branch: 1%% of 5000")
	require.InDelta(t, 50, other, 25, "another job's points: 1%%")
	require.InDelta(t, 1000, focused, 120, "the focused job's points: 20%%")

	ceiling := Options{}.Enable(AckLost, KindOptions{Probability: 0.2})
	ceiling.Budget = o.Budget
	in := New(ceiling, 7)
	in.Fork(sim.Branch{Step: 10, N: 1, Focus: "j-1"})
	require.InDelta(t, 2500, countFired(in, points("j-1"))["AckLost"], 200, "capped at one half")
	require.Equal(t, "10/1@j-1", in.Plan().Branch, "the plan keeps the focus")
}

// Rarer divides every point kind's probability, a default one too, and
// leaves the kinds that happen once a run, and which kinds are on, alone.
func TestRarerScalesPointKindsOnly(t *testing.T) {
	for s := uint64(1); s <= 50; s++ {
		o := swarmOf(s)
		o.Kinds[PublishFailsClean.Name] = KindOptions{} // a default probability is scaled too
		r := o.Rarer(1.0 / 16)
		require.NoError(t, r.Validate())
		require.Len(t, r.Kinds, len(o.Kinds), "the same kinds on")
		for name, ko := range o.Kinds {
			k, _ := Lookup(name)
			got := r.Kinds[name].Probability
			switch {
			case k.Timing != AtPoint:
				require.Equal(t, ko, r.Kinds[name], name)
			case ko.Probability == 0:
				require.InDelta(t, k.Defaults.Probability/16, got, 1e-12, name)
			default:
				require.InDelta(t, ko.Probability/16, got, 1e-12, name)
			}
		}
	}
}
