package faults

import (
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sim"
)

// effectsAt is the simulator's table of which effects apply at which point
// (the fault points in sim/store, sim/bus and sim/workers).
var effectsAt = map[sim.PointKind][]sim.Effect{
	sim.PointRedis: {sim.EffectFailBeforeApply, sim.EffectReplyLostAfterApply, sim.EffectDelay, sim.EffectCrash,
		sim.EffectCrashAfterApply, sim.EffectPause},
	sim.PointPublish: {sim.EffectFailClean, sim.EffectFailStored, sim.EffectDelay, sim.EffectCrash},
	sim.PointDeliver: {sim.EffectDuplicate, sim.EffectDelay},
	sim.PointAck:     {sim.EffectAckLost, sim.EffectAckLate, sim.EffectCrash},
	sim.PointWorker: {sim.EffectCrash, sim.EffectDuplicateResult, sim.EffectDelay, sim.EffectRetryableAfterSuccess,
		sim.EffectRetryableResult},
	sim.PointClient: {sim.EffectReplyLostAfterApply, sim.EffectDelay},
}

func TestCatalogIsWellFormed(t *testing.T) {
	cat := Catalog()
	require.GreaterOrEqual(t, len(cat), 30)
	names := make([]string, len(cat))
	for i, k := range cat {
		names[i] = k.Name
	}
	require.True(t, sort.StringsAreSorted(names), "catalog order is name order")
	pascal := regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
	for _, k := range cat {
		require.Regexp(t, pascal, k.Name)
		require.NotEmpty(t, k.Description, k.Name)
		got, ok := Lookup(k.Name)
		require.True(t, ok)
		require.Equal(t, k.Name, got.Name)
		switch k.Timing {
		case AtPoint, Window:
			for _, e := range append([]sim.Effect{k.Effect}, k.Also...) {
				require.Contains(t, effectsAt[k.Point], e, "%s: %s cannot happen at a %s point", k.Name, e, k.Point)
			}
			require.Positive(t, k.Defaults.Probability, k.Name)
			if k.Effect == sim.EffectDelay || k.Effect == sim.EffectPause || k.Timing == Window {
				require.Positive(t, k.Defaults.DurationMsMax, "%s draws a duration", k.Name)
			}
		case Setup:
			require.NotNil(t, k.draw, k.Name)
			require.NotNil(t, k.apply, k.Name)
		default:
			t.Fatalf("%s: timing %q", k.Name, k.Timing)
		}
	}
	_, ok := Lookup("NoSuchFault")
	require.False(t, ok)
}

// The named points below cover each filter's positive and negative space.
func namedPoints() map[string]*sim.Point {
	return map[string]*sim.Point{
		"replica hset":          redisPoint("replica-1", "hset", true, "job:j-1", "state", "X"),
		"replica hget":          redisPoint("replica-2", "hget", false, "job:j-1", "state"),
		"client hget":           redisPoint("clients", "hget", false, "job:j-1", "state"),
		"client set":            redisPoint("clients", "set", true, "k", "v"),
		"create pending":        transitionPoint("replica-1", "", "PENDING", "tok"),
		"schedule":              transitionPoint("replica-1", "PENDING", "SCHEDULED", "tok"),
		"dispatch":              transitionPoint("replica-2", "SCHEDULED", "DISPATCHED", "tok"),
		"running":               transitionPoint("replica-3", "DISPATCHED", "RUNNING", "tok"),
		"rollback":              transitionPoint("replica-1", "DISPATCHED", "SCHEDULED", "tok"),
		"cancel":                transitionPoint("replica-2", "RUNNING", "CANCELLED", "tok"),
		"timeout unfenced":      transitionPoint("replica-1", "DISPATCHED", "TIMEOUT", ""),
		"lock renew script":     redisPoint("replica-1", "evalsha", true, "aaaa", 1, "cordum:scheduler:job:j-1", "tok", "60000"),
		"timer lock renewal":    onTimer(redisPoint("replica-1", "evalsha", true, "aaaa", 1, "cordum:scheduler:job:j-1", "tok", "60000")),
		"other 4-key script":    redisPoint("replica-1", "evalsha", true, "bbbb", 4, "wf:run:r1", "a", "b", "c", "r1", "SCHEDULED", 1, "DISPATCHED"),
		"replica publish":       busPoint(sim.PointPublish, "replica-1", "worker.w1.jobs", "j-1"),
		"client publish":        busPoint(sim.PointPublish, "clients", "sys.job.submit", "j-1"),
		"worker result publish": busPoint(sim.PointPublish, "worker-w1", "sys.job.result", "j-1"),
		"worker heartbeat":      busPoint(sim.PointPublish, "worker-w1", "sys.heartbeat", ""),
		"deliver to replica":    busPoint(sim.PointDeliver, "replica-2", "sys.job.submit", "j-1"),
		"deliver heartbeat":     busPoint(sim.PointDeliver, "replica-2", "sys.heartbeat", ""),
		"replica ack":           busPoint(sim.PointAck, "replica-1", "sys.job.result", "j-1"),
		"worker ack":            busPoint(sim.PointAck, "worker-w1", "worker.w1.jobs", "j-1"),
		"replica heartbeat ack": busPoint(sim.PointAck, "replica-1", "sys.heartbeat", ""),
		"worker finished":       {Kind: sim.PointWorker, Group: "worker-w2", JobID: "j-1"},
		"client submit landed":  {Kind: sim.PointClient, Group: "clients", JobID: "j-1"},
		"gateway reserve":       redisPoint("gateway", "evalsha", true, "cccc", 2, "wf:run:idempotency:k1", "wf:run:reservations", "r1|fp", "k1", "1767225600000"),
		"gateway takeover":      redisPoint("gateway", "evalsha", true, "dddd", 3, "wf:run:idempotency:k1", "wf:run:reservations", "wf:run:r0", "r0|fp", "r1|fp", "k1", "1767225600000"),
		"gateway release":       redisPoint("gateway", "evalsha", true, "eeee", 2, "wf:run:idempotency:k1", "wf:run:reservations", "r1|fp", "k1"),
		"gateway create run":    redisPoint("gateway", "evalsha", true, "ffff", 4, "wf:run:r1", "wf:runs:active:o", "wf:run:idempotency:k1", "wf:run:reservations", "o", "wf", "fp", "1", "{}", "1", "r1", "r1|fp", "k1"),
		"gateway hget":          redisPoint("gateway", "hget", false, "wf:def:wf-1", "org"),
		"worker gate read":      redisPoint("worker-w1", "hget", false, "outbox:job:j-1", "state"),
		"worker gate claim":     redisPoint("worker-w1", "evalsha", true, "abab", 1, "outbox:ran:d-1", "d-1"),
	}
}

var (
	replicaRedis = []string{"replica hset", "replica hget", "create pending", "schedule", "dispatch", "running",
		"rollback", "cancel", "timeout unfenced", "lock renew script", "timer lock renewal", "other 4-key script"}
	replicaWrites = []string{"replica hset", "create pending", "schedule", "dispatch", "running", "rollback", "cancel",
		"timeout unfenced", "lock renew script", "timer lock renewal", "other 4-key script"}
	gatewayWrites = []string{"gateway reserve", "gateway takeover", "gateway release", "gateway create run"}
	storeAll      = append(append(append([]string{}, replicaRedis...), "client hget", "client set", "gateway hget"), gatewayWrites...)
	storeReads    = []string{"replica hget", "client hget", "gateway hget"}
	gatewayReads  = []string{"client hget", "gateway hget"}
	workerStore   = []string{"worker gate read", "worker gate claim"}
	storeAnyone   = append(append([]string{}, storeAll...), workerStore...)
	jobPublish    = []string{"replica publish", "client publish", "worker result publish"}
	jobDeliver    = []string{"deliver to replica"}
	jobAcks       = []string{"replica ack", "worker ack"}
	worker        = []string{"worker finished"}
)

// Each kind applies exactly at the points listed, and nowhere else.
func TestAvailabilityFilters(t *testing.T) {
	want := map[string][]string{
		"StoreWriteFailsBeforeApply":     replicaWrites,
		"StoreReplyLostAfterApply":       replicaWrites,
		"StoreReadFails":                 storeReads,
		"StoreLatency":                   storeAnyone,
		"StoreOutage":                    storeAnyone,
		"StoreReadsFailWritesWork":       storeReads,
		"DispatchedWriteFails":           {"dispatch"},
		"DispatchedWriteReplyLost":       {"dispatch"},
		"RunningWriteFails":              {"running"},
		"RollbackWriteFails":             {"rollback"},
		"RollbackWriteReplyLost":         {"rollback"},
		"PublishFailsClean":              jobPublish,
		"PublishFailsAfterStored":        jobPublish,
		"PublishLatency":                 jobPublish,
		"DeliveryDuplicated":             jobDeliver,
		"DeliveryDelayed":                jobDeliver,
		"AckLost":                        jobAcks,
		"AckLateAfterAckWait":            jobAcks,
		"ReplicaCrash":                   replicaRedis,
		"ReplicaCrashAfterApply":         replicaWrites,
		"ReplicaCrashBeforePublish":      {"replica publish"},
		"ReplicaCrashBeforeAck":          {"replica ack"},
		"ReplicaPauseBeyondLockTTL":      {"create pending", "schedule", "dispatch", "running", "rollback", "cancel"},
		"WorkerCrashMidJob":              worker,
		"WorkerResultDuplicated":         worker,
		"WorkerResultLate":               worker,
		"WorkerResultLateAndRetryable":   worker,
		"WorkerRetryableWindow":          worker,
		"WorkerRetryableAfterSuccess":    worker,
		"WorkerHeartbeatsStop":           {"worker heartbeat"},
		"GatewayCrashAfterReserve":       {"gateway reserve", "gateway takeover"},
		"AdmissionWriteFailsBeforeApply": gatewayWrites,
		"CancelWriteFails":               {"cancel"},
		"LockRenewalFails":               {"timer lock renewal"},
		"StatusReadFails":                gatewayReads,
		"WorkerResultPublishFails":       {"worker result publish"},
		"WorkerStoreFails":               workerStore,
		"WorkerStoreReplyLost":           {"worker gate claim"},
		"SubmitReplyLost":                {"client submit landed"},
		"SubmitRetriedLate":              {"client submit landed"},
		// Setup kinds act on the world, never at a point.
		"ClockSkew":                 nil,
		"PoolMappingMissing":        nil,
		"PoolMappingMissingStatic":  nil,
		"RollingDeploy":             nil,
		"StoreLosesAckedWrites":     nil,
		"BrokerLosesAckedPublishes": nil,
		"BrokerRestartForgetsAcks":  nil,
	}
	points := namedPoints()
	for _, k := range Catalog() {
		expected, listed := want[k.Name]
		require.True(t, listed, "kind %s has no filter expectation in this test", k.Name)
		for name, p := range points {
			require.Equal(t, contains(expected, name), k.Applies(p), "%s at %q", k.Name, name)
		}
	}
	require.Len(t, want, len(Catalog()), "every expectation names a kind of the catalog")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestTargetsAreStableDescriptions(t *testing.T) {
	p := namedPoints()
	require.Equal(t, "evalsha job:j-1 SCHEDULED->DISPATCHED", Target(p["dispatch"]))
	require.Equal(t, "evalsha job:j-1 ->PENDING", Target(p["create pending"]))
	require.Equal(t, "evalsha:aaaa cordum:scheduler:job:j-1", Target(p["lock renew script"]))
	require.Equal(t, "hget job:j-1", Target(p["replica hget"]))
	require.Equal(t, "worker.w1.jobs j-1", Target(p["replica publish"]))
	require.Equal(t, "sys.heartbeat", Target(p["worker heartbeat"]))
	require.Equal(t, "j-1", Target(p["worker finished"]))
	eval := redisPoint("replica-1", "eval", true, "return 1", 1, "k")
	require.Equal(t, "eval:e0e1f9fa k", Target(eval), "EVAL names its script by the body's sha, as EVALSHA would")

	// Malformed or short transition arguments are not transitions.
	short := transitionPoint("replica-1", "DISPATCHED", "SCHEDULED", "tok")
	short.Args = short.Args[:9]
	withFacts(short)
	require.False(t, RollbackWriteFails.Applies(short))
	other := transitionPoint("replica-1", "DISPATCHED", "SCHEDULED", "tok")
	other.Args[7] = "j-2" // job id argument disagrees with the key
	withFacts(other)
	require.False(t, RollbackWriteFails.Applies(other))
}

// Every kind says what it needs to fire; a kind aimed at a write the
// observer must name says which hook names it, and which spec field.
func TestEveryKindSaysWhatItNeedsToFire(t *testing.T) {
	for _, k := range Catalog() {
		require.NotEmpty(t, k.FiresAt(), k.Name)
	}
	for _, k := range []Kind{DispatchedWriteFails, RunningWriteFails, RollbackWriteFails, CancelWriteFails} {
		require.Contains(t, k.FiresAt(), "Observer.Command", k.Name)
		require.Contains(t, k.FiresAt(), "Spec.", k.Name)
	}
}
