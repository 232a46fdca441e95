package faults

import (
	"encoding/json"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim"
)

// richOptions turns on every kind but the static misconfiguration, at its
// defaults, with a few rare ones turned up so a ten-job run sees them.
func richOptions() Options {
	var o Options
	for _, k := range Catalog() {
		if k.Name != PoolMappingMissingStatic.Name {
			o = o.Enable(k, KindOptions{})
		}
	}
	return o.Enable(ReplicaCrash, KindOptions{Probability: 0.01}).
		Enable(ReplicaPauseBeyondLockTTL, KindOptions{Probability: 0.05})
}

// A plan recorded from a run replays the same faults: same checksum, same fault
// records, same plan, nothing missed. The plan goes through JSON first, so the
// encoded form is all a replay needs.
func TestPlanReplaysTheRun(t *testing.T) {
	cases := []struct {
		name string
		opts func(seed uint64) Options
	}{
		{"rich", func(uint64) Options { return richOptions() }},
		{"swarm", swarmOf},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			points := 0
			for seed := uint64(1); seed <= 3; seed++ {
				rec := New(tc.opts(seed), seed)
				res := run(t, shortConfig(seed, rec))
				plan := rec.Plan()
				var atPoints []history.FaultRecord // scheduled events are recorded beside them, at no point
				for _, f := range res.History.Faults {
					if f.Point != "" {
						atPoints = append(atPoints, f)
					}
				}
				require.Len(t, atPoints, pointFaults(rec), "the world saw every point fault the injector counted")
				for _, e := range plan.Entries {
					if !e.Setup {
						points++
					}
				}

				b, err := plan.Encode()
				require.NoError(t, err)
				decoded, err := DecodePlan(b)
				require.NoError(t, err)

				rep := Replay(decoded)
				again := run(t, shortConfig(seed, rep))
				require.Equal(t, res.Checksum, again.Checksum, "seed %d: replay diverged", seed)
				require.Equal(t, res.History.Faults, again.History.Faults, "seed %d", seed)
				require.Equal(t, plan, rep.Plan(), "seed %d: the replay records the plan it replayed", seed)
				require.Empty(t, rep.Missed(), "seed %d", seed)
				require.Equal(t, rec.Fired(), rep.Fired(), "seed %d", seed)

				// Recording is deterministic too.
				rec2 := New(tc.opts(seed), seed)
				require.Equal(t, res.Checksum, run(t, shortConfig(seed, rec2)).Checksum)
				require.Equal(t, plan, rec2.Plan())
			}
			require.Positive(t, points, "the runs fired point faults")
		})
	}
}

// pointFaults counts the faults the injector fired at points (setup faults act
// on the world and leave no fault record).
func pointFaults(in *Injector) int {
	n := 0
	for name, v := range in.Fired() {
		if k, _ := Lookup(name); k.Timing != Setup {
			n += v
		}
	}
	return n
}

// A replay fires nothing outside its plan: removing entries removes faults.
func TestReplayFiresOnlyThePlan(t *testing.T) {
	rec := New(richOptions(), 2)
	run(t, shortConfig(2, rec))
	plan := rec.Plan()
	require.Greater(t, len(plan.Entries), 2)

	empty := Replay(Plan{Version: PlanVersion, Seed: 2})
	res := run(t, shortConfig(2, empty))
	require.Empty(t, res.History.Faults)
	require.Empty(t, empty.Plan().Entries)

	last := len(plan.Entries) - 1
	smaller := Without(plan, last)
	rep := Replay(smaller)
	run(t, shortConfig(2, rep))
	allowed := map[pointKey]bool{}
	for _, e := range smaller.Entries {
		allowed[planKey(e)] = true
	}
	for _, e := range rep.Plan().Entries {
		if !e.Setup {
			require.True(t, allowed[planKey(e)], "replay fired %s, which is not in its plan", e)
		}
	}
	require.NotContains(t, rep.Plan().Entries, plan.Entries[last])
}

func TestPlanJSON(t *testing.T) {
	plan := Plan{Version: PlanVersion, Seed: 9, Entries: []PlanEntry{
		{Kind: "StoreOutage", Effect: sim.EffectFailBeforeApply, Point: sim.PointRedis, Setup: true, StartMs: 1500, DurationMs: 20_000},
		{Kind: "ClockSkew", Group: "replica-2", Setup: true, SkewMs: -150},
		{Kind: "PoolMappingMissing", Setup: true, Target: "gpu", DurationMs: 9000},
		{Kind: "RollbackWriteFails", Effect: sim.EffectFailBeforeApply, Point: sim.PointRedis, Group: "replica-1",
			Target: "evalsha job:j-3 DISPATCHED->SCHEDULED", Occurrence: 1, Step: 812},
		{Kind: "DeliveryDelayed", Effect: sim.EffectDelay, DurationMs: 4200, Point: sim.PointDeliver, Group: "replica-3",
			Target: "sys.job.result j-3", Step: 900},
	}}
	b, err := plan.Encode()
	require.NoError(t, err)
	require.Contains(t, string(b), `"version": 1`)
	got, err := DecodePlan(b)
	require.NoError(t, err)
	require.Equal(t, plan, got)

	// A plan without a version gets the current one when written.
	b, err = json.Marshal(Plan{Seed: 1})
	require.NoError(t, err)
	require.JSONEq(t, `{"version":1,"seed":1,"entries":[]}`, string(b))

	// Plans of another format are refused, with a message that says what to do.
	other := strings.Replace(string(b), `"version":1`, `"version":2`, 1)
	_, err = DecodePlan([]byte(other))
	require.ErrorContains(t, err, "format version 2, this build reads version 1")
	_, err = DecodePlan([]byte(`{"seed":1,"entries":[]}`))
	require.ErrorContains(t, err, "no format version")
	_, err = DecodePlan([]byte(`{"version":1,"entries":[{"kind":"GoneFault"}]}`))
	require.ErrorContains(t, err, `"GoneFault"`)
	_, err = DecodePlan([]byte(`not json`))
	require.Error(t, err)

	// Embedded in a report, the version check still applies.
	var report struct {
		Plan Plan `json:"plan"`
	}
	require.ErrorContains(t, json.Unmarshal([]byte(`{"plan":`+other+`}`), &report), "format version 2")

	for _, e := range plan.Entries {
		require.NotEmpty(t, e.String())
	}
}

func TestPlanSubsets(t *testing.T) {
	plan := Plan{Version: PlanVersion, Seed: 3}
	for _, k := range []string{"AckLost", "DeliveryDuplicated", "StoreLatency", "ReplicaCrash", "WorkerResultLate"} {
		plan.Entries = append(plan.Entries, PlanEntry{Kind: k})
	}
	kinds := func(p Plan) []string {
		var out []string
		for _, e := range p.Entries {
			out = append(out, e.Kind)
		}
		return out
	}
	require.Equal(t, []string{"AckLost", "DeliveryDuplicated", "ReplicaCrash", "WorkerResultLate"}, kinds(Without(plan, 2)))
	require.Len(t, plan.Entries, 5, "Without copies")
	require.Equal(t, []string{"DeliveryDuplicated", "WorkerResultLate"}, kinds(Subset(plan, []int{4, 1, 4})))
	require.Empty(t, Subset(plan, nil).Entries)
	require.Equal(t, uint64(3), Subset(plan, nil).Seed)
	require.Panics(t, func() { Without(plan, 5) })
	require.Equal(t, [][]int{{0, 1}, {2, 3, 4}}, Chunks(plan, 2))
	require.Equal(t, [][]int{{0}, {1}, {2}, {3}, {4}}, Chunks(plan, 9))
	require.Empty(t, Chunks(Plan{}, 3))
}

func TestInjectorServesOneRun(t *testing.T) {
	inj := New(Options{}, 1)
	run(t, shortConfig(1, inj))
	require.Panics(t, func() { inj.SetupWorld(sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 1})) })
}

// A replay whose world was built without the plan's skews would replay
// something else: it stops at once.
func TestReplayRequiresThePlansSkews(t *testing.T) {
	plan := Plan{Version: PlanVersion, Entries: []PlanEntry{{Kind: "ClockSkew", Group: "replica-1", Setup: true, SkewMs: 40}}}
	rep := Replay(plan)
	require.Equal(t, int64(40), rep.ReplicaSkew(2)[0].Milliseconds())
	require.Panics(t, func() {
		rep.SetupWorld(sim.NewWorld(sim.Config{System: cordum.System{}, Seed: 1}))
	})
}
