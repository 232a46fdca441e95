package faults

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// A replayed window fires at every eligible point in [start, end): from its
// first millisecond, not at its end; a point outside it is still counted
// eligible, once.
func TestReplayedWindowCoversStartToEnd(t *testing.T) {
	plan := Plan{Version: PlanVersion, Entries: []PlanEntry{{Kind: StoreOutage.Name, Effect: StoreOutage.Effect,
		Point: StoreOutage.Point, Setup: true, StartMs: 1000, DurationMs: 500}}}
	rep := Replay(plan)
	rep.SetupWorld(sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 1}))
	fires := func(at time.Duration) bool {
		p := redisPoint("replica-1", "hget", false, "job:j-1", "state")
		p.Time = at
		_, fired := rep.At(p)
		return fired
	}
	require.False(t, fires(999*time.Millisecond))
	require.True(t, fires(1000*time.Millisecond), "the window's first millisecond")
	require.True(t, fires(1499*time.Millisecond))
	require.False(t, fires(1500*time.Millisecond), "the window ends before its end")
	require.Equal(t, []KindStats{{Kind: StoreOutage.Name, Eligible: 4, Fired: 2}}, rep.Stats())
}

// A window covering a point comes first: a point entry the plan holds for
// that point is not fired there, and is reported missed.
func TestReplayedWindowComesBeforeAPointEntry(t *testing.T) {
	read := redisPoint("replica-1", "hget", false, "job:j-1", "state")
	read.Time = 1200 * time.Millisecond
	plan := Plan{Version: PlanVersion, Entries: []PlanEntry{
		{Kind: StoreOutage.Name, Effect: StoreOutage.Effect, Point: StoreOutage.Point, Setup: true, StartMs: 1000, DurationMs: 500},
		{Kind: StoreReadFails.Name, Effect: StoreReadFails.Effect, Point: sim.PointRedis, Group: "replica-1", Target: Target(read)}}}
	rep := Replay(plan)
	rep.SetupWorld(sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 1}))
	f, fired := rep.At(read)
	require.True(t, fired)
	require.Equal(t, StoreOutage.Name, f.Kind)
	require.Equal(t, []int{1}, rep.Missed())
}

// A replayed point entry fires at its point's occurrence only, with its
// duration in milliseconds.
func TestReplayedPointEntryFiresAtItsOccurrence(t *testing.T) {
	deliver := busPoint(sim.PointDeliver, "replica-2", "sys.job.submit", "j-1")
	plan := Plan{Version: PlanVersion, Entries: []PlanEntry{{Kind: DeliveryDelayed.Name, Effect: DeliveryDelayed.Effect,
		Point: sim.PointDeliver, Group: "replica-2", Target: Target(deliver), Occurrence: 1, DurationMs: 1500}}}
	rep := Replay(plan)
	rep.SetupWorld(sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 1}))
	_, first := rep.At(deliver)
	require.False(t, first, "occurrence 0 is not the plan's")
	f, second := rep.At(deliver)
	require.True(t, second)
	require.Equal(t, 1500*time.Millisecond, f.Duration)
	require.Empty(t, rep.Missed())
	require.Equal(t, []KindStats{{Kind: DeliveryDelayed.Name, Eligible: 2, Fired: 1}}, rep.Stats())
}

// A drawn window lies inside the fault phase, happens only with its
// probability, and is never empty.
func TestDrawnWindowsLieInsideTheFaultPhase(t *testing.T) {
	phase := time.Minute
	windows := func(ko KindOptions) []PlanEntry {
		var out []PlanEntry
		for seed := uint64(1); seed <= 40; seed++ {
			in := New(Only().Enable(StoreOutage, ko), seed)
			in.SetupWorld(sim.NewWorld(sim.Config{System: cordum.System{}, Seed: seed, FaultPhase: phase}))
			out = append(out, in.Plan().Entries...)
		}
		return out
	}
	long := windows(KindOptions{Probability: 1, DurationMsMin: 20_000, DurationMsMax: 30_000})
	require.Len(t, long, 40)
	for _, e := range long {
		require.LessOrEqual(t, e.StartMs+e.DurationMs, phase.Milliseconds(), "%+v", e)
	}
	require.Empty(t, windows(KindOptions{Probability: 1e-9, DurationMsMin: 20_000, DurationMsMax: 30_000}))
	short := windows(KindOptions{Probability: 1, DurationMsMin: 0, DurationMsMax: 1})
	require.NotEmpty(t, short)
	require.Less(t, len(short), 40, "some seeds draw a window of 0ms, which is none")
	for _, e := range short {
		require.Positive(t, e.DurationMs)
	}
}

// A replay asked for fewer replicas' skews than its plan names skips the others.
func TestReplaySkewsOfReplicasTheWorldLacks(t *testing.T) {
	plan := Plan{Version: PlanVersion, Entries: []PlanEntry{{Kind: ClockSkew.Name, Group: "replica-3", Setup: true, SkewMs: 40}}}
	require.Equal(t, []time.Duration{0, 0}, Replay(plan).ReplicaSkew(2))
}

// Only "replica-N" with N from 1 names a replica's index.
func TestReplicaIndexReadsReplicaNamesOnly(t *testing.T) {
	i, ok := replicaIndex("replica-2")
	require.True(t, ok)
	require.Equal(t, 1, i)
	for _, group := range []string{"replica-0", "replica-x", "worker-1", "gateway", "7"} {
		_, ok := replicaIndex(group)
		require.False(t, ok, group)
	}
}

// A kind applies only at its own kind of point, never at none.
func TestKindAppliesOnlyAtItsPointKind(t *testing.T) {
	require.False(t, WorkerCrashMidJob.Applies(nil))
	require.False(t, WorkerCrashMidJob.Applies(redisPoint("worker-w1", "hget", false, "job:j-1", "state")))
	require.True(t, WorkerCrashMidJob.Applies(&sim.Point{Kind: sim.PointWorker, Group: "worker-w1", JobID: "j-1"}))
}

// A script call too short to carry its sha is described by command and key.
func TestTargetOfAScriptCallWithoutItsSha(t *testing.T) {
	require.Equal(t, "evalsha job:j-1", Target(&sim.Point{Kind: sim.PointRedis, Cmd: "evalsha", Key: "job:j-1", Args: []any{"evalsha"}}))
}

// drawMs draws every whole millisecond of [lo, hi], both bounds included.
func TestDrawMsCoversBothBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[int64]bool{}
	for range 100 {
		seen[drawMs(rng, 4, 6)] = true
	}
	require.Equal(t, map[int64]bool{4: true, 5: true, 6: true}, seen)
}

// Without and Subset refuse an index outside the plan, as a programmer error
// of their own, not a slice's.
func TestPlanIndicesOutsideThePlanPanic(t *testing.T) {
	plan := Plan{Version: PlanVersion, Entries: []PlanEntry{{Kind: "AckLost"}, {Kind: "StoreLatency"}}}
	require.PanicsWithValue(t, "faults: Without(-1) of a plan with 2 entries", func() { Without(plan, -1) })
	require.PanicsWithValue(t, "faults: Without(2) of a plan with 2 entries", func() { Without(plan, 2) })
	require.PanicsWithValue(t, "faults: Subset index -1 of a plan with 2 entries", func() { Subset(plan, []int{-1}) })
	require.PanicsWithValue(t, "faults: Subset index 2 of a plan with 2 entries", func() { Subset(plan, []int{2}) })
	require.Len(t, Without(plan, 0).Entries, 1)
	require.Len(t, Without(plan, 1).Entries, 1)
	require.Len(t, Subset(plan, []int{0, 1}).Entries, 2)
}
