package history

import "testing"

// Each kind of setup entry reads as what it does: a deploy and a server's
// loss are not a missing pool mapping.
func TestPlanEntryStringSaysWhatTheEntryDoes(t *testing.T) {
	for _, c := range []struct {
		e    PlanEntry
		want string
	}{
		{PlanEntry{Kind: "PoolMappingMissing", Setup: true, Target: "default", DurationMs: 37_278},
			`PoolMappingMissing: topic "default" has no pool mapping for the first 37.278s`},
		{PlanEntry{Kind: "PoolMappingMissingStatic", Setup: true, Target: "gpu"},
			`PoolMappingMissingStatic: topic "gpu" has no pool mapping`},
		{PlanEntry{Kind: "RollingDeploy", Setup: true, Group: "replica-2", StartMs: 63_000, DurationMs: 40_000},
			"RollingDeploy: replica-2 stopped at 1m3s, started again 40s later"},
		{PlanEntry{Kind: "BrokerRestartForgetsAcks", Setup: true, StartMs: 19_000, DurationMs: 5_500},
			"BrokerRestartForgetsAcks: at 19s, for what came in over the 5.5s before"},
		{PlanEntry{Kind: "ClockSkew", Setup: true, Group: "replica-1", SkewMs: -250},
			"ClockSkew: replica-1 clock skewed by -250ms"},
		{PlanEntry{Kind: "StoreOutage", Setup: true, Point: PointRedis, Effect: EffectFailClean, StartMs: 1_000, DurationMs: 2_000},
			"StoreOutage: fail_clean at every eligible redis point of every group from 1s to 3s"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
