package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim"
)

// In a real run with the targeted kinds turned up, every fault fires at a point
// its filter admits: a rollback failure only at DISPATCHED -> SCHEDULED (never at
// a transition to RUNNING), a failing read never at a write, window faults only
// inside their window.
func TestKindsFireOnlyWhereTheyApplyInARun(t *testing.T) {
	opts := Options{Budget: Budget{FaultsMax: -1, PerKindMax: -1}}.
		Enable(PublishFailsClean, KindOptions{Probability: 0.5}).
		Enable(RollbackWriteFails, KindOptions{Probability: 1}).
		Enable(RunningWriteFails, KindOptions{Probability: 0.5}).
		Enable(DispatchedWriteReplyLost, KindOptions{Probability: 0.3}).
		Enable(StoreReadFails, KindOptions{Probability: 0.05}).
		Enable(WorkerRetryableAfterSuccess, KindOptions{Probability: 0.5}).
		Enable(StoreReadsFailWritesWork, KindOptions{DurationMsMin: 20_000, DurationMsMax: 20_000}).
		Enable(WorkerHeartbeatsStop, KindOptions{})
	fired := map[string]int{}
	for seed := uint64(1); seed <= 3; seed++ {
		inj := &watched{Injector: New(opts, seed)}
		cfg := shortConfig(seed, inj.Injector)
		cfg.Injector = inj
		res := run(t, cfg)
		requireAllTerminal(t, res)
		windows := map[string]PlanEntry{}
		for _, e := range inj.Plan().Entries {
			if e.Setup {
				windows[e.Kind] = e
			}
		}
		for _, fa := range inj.fired {
			p, f := fa.p, fa.f
			k, ok := Lookup(f.Kind)
			require.True(t, ok, f.Kind)
			require.True(t, k.Applies(&p), "%s fired at %s %s %q", f.Kind, p.Kind, p.Group, Target(&p))
			require.Equal(t, k.Effect, f.Effect)
			fired[f.Kind]++
			switch k.Name {
			case RollbackWriteFails.Name:
				tr, ok := transitionOf(&p)
				require.True(t, ok)
				require.Equal(t, "DISPATCHED", tr.From)
				require.Equal(t, "SCHEDULED", tr.To)
			case RunningWriteFails.Name:
				tr, _ := transitionOf(&p)
				require.Equal(t, "RUNNING", tr.To)
			case StoreReadFails.Name:
				require.False(t, p.Write, "read fault at %s", p.Cmd)
			case StoreReadsFailWritesWork.Name, WorkerHeartbeatsStop.Name:
				win := windows[k.Name]
				require.GreaterOrEqual(t, p.Time, time.Duration(win.StartMs)*time.Millisecond)
				require.Less(t, p.Time, time.Duration(win.StartMs+win.DurationMs)*time.Millisecond)
				if win.Group != "" {
					require.Equal(t, win.Group, p.Group)
				}
			}
		}
		// The injector's own counters agree with what the world saw.
		require.Len(t, res.History.Faults, len(inj.fired))
		total := 0
		for _, n := range inj.Fired() {
			total += n
		}
		require.Equal(t, len(inj.fired), total)
		for _, st := range inj.Stats() {
			if k, _ := Lookup(st.Kind); k.Timing == AtPoint {
				require.LessOrEqual(t, st.Fired, st.Eligible, st.Kind)
			}
		}
	}
	// Each assertion above had something to check.
	for _, k := range []Kind{RollbackWriteFails, RunningWriteFails, StoreReadFails, StoreReadsFailWritesWork,
		WorkerHeartbeatsStop, PublishFailsClean} {
		require.Positive(t, fired[k.Name], "%s never fired", k.Name)
	}
}

// A crash fault brings its replica down and back: the world still finishes
// every job.
func TestReplicaCrashRestartsTheReplica(t *testing.T) {
	opts := Options{Budget: Budget{ReplicaCrashesMax: 2}}.
		Enable(ReplicaCrash, KindOptions{Probability: 0.05}).
		Enable(ReplicaCrashBeforePublish, KindOptions{Probability: 0.5})
	inj := New(opts, 7)
	cfg := shortConfig(7, inj)
	cfg.KeepTrace = true
	w := sim.NewWorld(cfg)
	res := w.Run()
	require.NoError(t, res.Err)
	requireAllTerminal(t, res)
	crashes := 0
	for _, f := range res.History.Faults {
		if f.Effect == sim.EffectCrash {
			crashes++
		}
	}
	require.Equal(t, 2, crashes, "the budget's two crashes fired")
	require.Equal(t, 2, strings.Count(string(w.Trace().Bytes()), "replica restarted"))
}

func TestPoolMappingMissingHealsOrStays(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		restored bool
	}{{PoolMappingMissing, true}, {PoolMappingMissingStatic, false}} {
		t.Run(tc.kind.Name, func(t *testing.T) {
			inj := New(Only(tc.kind), 3)
			cfg := shortConfig(3, inj)
			cfg.KeepTrace = true
			w := sim.NewWorld(cfg)
			res := w.Run()
			require.NoError(t, res.Err)
			requireAllTerminal(t, res)
			plan := inj.Plan()
			require.Len(t, plan.Entries, 1)
			e := plan.Entries[0]
			require.Equal(t, "default", e.Target)
			require.Equal(t, map[string]int{tc.kind.Name: 1}, inj.Fired())
			_, mapped := w.Config().Options.Routing.Topics["default"]
			require.Equal(t, tc.restored, mapped)
			if tc.restored {
				require.Positive(t, e.DurationMs)
				require.Equal(t, 2, strings.Count(string(w.Trace().Bytes()), "routing replaced"))
			} else {
				require.Zero(t, e.DurationMs)
				for id, dlq := range res.DLQ {
					require.True(t, strings.HasPrefix(string(dlq.ReasonCode), "no_pool_mapping"), "job %s: %s", id, dlq.ReasonCode)
				}
				require.Len(t, res.DLQ, 10)
			}
		})
	}
}

func TestClockSkewRecordsTheSkewsTheWorldHas(t *testing.T) {
	inj := New(Only(ClockSkew), 11)
	skews := inj.ReplicaSkew(3)
	require.Equal(t, skews[:2], New(Only(ClockSkew), 11).ReplicaSkew(2), "replica i's skew does not depend on n")
	nonzero := 0
	for _, s := range skews {
		require.LessOrEqual(t, s.Abs(), 2*time.Second)
		if s != 0 {
			nonzero++
		}
	}
	require.Positive(t, nonzero)
	run(t, shortConfig(11, inj))
	require.Equal(t, nonzero, inj.Fired()[ClockSkew.Name])
	for _, e := range inj.Plan().Entries {
		i, _ := replicaIndex(e.Group)
		require.Equal(t, skews[i], time.Duration(e.SkewMs)*time.Millisecond)
	}

	// A world built without the handed-out skews gets no ClockSkew entries.
	other := New(Only(ClockSkew), 11)
	other.ReplicaSkew(3)
	cfg := shortConfig(11, other)
	cfg.ReplicaSkew = nil
	run(t, cfg)
	require.Empty(t, other.Plan().Entries)
	require.Zero(t, other.Fired()[ClockSkew.Name])

	require.Equal(t, make([]time.Duration, 3), New(Options{}, 11).ReplicaSkew(3), "no skew without ClockSkew")
}
