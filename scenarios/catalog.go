package scenarios

import (
	"time"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// often raises every listed kind's probability, so a short scenario sees it.
func often(p float64, kinds ...faults.Kind) func(faults.Options) faults.Options {
	return func(o faults.Options) faults.Options {
		for _, k := range kinds {
			ko := o.Kinds[k.Name]
			ko.Probability = p
			o = o.Enable(k, ko)
		}
		return o
	}
}

// sparseFactor is how much rarer sparse-swarm's point faults are than the
// swarm's.
const sparseFactor = 16

// All is every scenario, in catalog order.
func All() []Scenario {
	return []Scenario{
		{
			Name:   "dispatch-rollback",
			Source: "seed 000",
			Description: "publish failures after DISPATCHED is written roll back to SCHEDULED; DISPATCHED, RUNNING and rollback " +
				"writes fail. No de-duplication at the broker or the worker: the engine alone must dispatch once",
			Faults: []faults.Kind{faults.PublishFailsClean, faults.DispatchedWriteFails, faults.DispatchedWriteReplyLost,
				faults.RunningWriteFails, faults.RollbackWriteFails, faults.RollbackWriteReplyLost},
			Options: often(0.15, faults.PublishFailsClean, faults.RollbackWriteFails, faults.DispatchedWriteFails),
			World:   World{NoBrokerDedup: true, NoWorkerDedup: true},
			Seeds:   SeedRange{First: 1000, Count: 12},
		},
		recoverable,
		longJobs,
		{
			Name:        "fail-closed-read",
			Source:      "seed 001",
			Description: "state reads fail (alone, and while writes work) under redelivery; the engine must never dispatch on an unknown state",
			Faults:      []faults.Kind{faults.StoreReadFails, faults.StoreReadsFailWritesWork, faults.DeliveryDuplicated, faults.AckLost},
			Options:     often(0.1, faults.StoreReadFails),
			Seeds:       SeedRange{First: 2000, Count: 10},
		},
		{
			Name:        "no-pool-mapping-race",
			Source:      "seed 003",
			Description: "a topic ships before its pool mapping, which arrives inside the grace window: jobs must still be dispatched",
			Faults:      []faults.Kind{faults.PoolMappingMissing},
			Options: func(o faults.Options) faults.Options {
				return o.Enable(faults.PoolMappingMissing, faults.KindOptions{Probability: 1, DurationMsMin: 2000, DurationMsMax: 15000})
			},
			// The mapping always arrives inside the grace window, so no job may
			// fail; a system that fails a job without a route at once has no
			// window for the mapping to arrive in.
			Needs: []Feature{FeatureRouteAwaited},
			Spec:  checker.Spec{AllSucceed: true, Timely: true},
			Seeds: SeedRange{First: 3000, Count: 6},
		},
		{
			Name:        "no-pool-mapping-static",
			Source:      "seed 003",
			Description: "a topic never gets a pool mapping: its jobs fail after the grace window with no_pool_mapping_topic, never max_scheduling_retries",
			Faults:      []faults.Kind{faults.PoolMappingMissingStatic},
			Options: func(o faults.Options) faults.Options {
				return o.Enable(faults.PoolMappingMissingStatic, faults.KindOptions{Probability: 1})
			},
			// Only the routing is wrong: the engine's retries run on time.
			Spec:  checker.Spec{Timely: true},
			Seeds: SeedRange{First: 3100, Count: 4},
		},
		{
			Name:   "scheduling-retry-cap",
			Source: "seed 003",
			Description: "a pool with no live workers: its jobs retry to a low cap while store reads fail now and then, and " +
				"each DLQ entry must name no_workers, never max_scheduling_retries",
			Faults:  []faults.Kind{faults.StoreReadFails},
			Options: often(0.02, faults.StoreReadFails),
			World: World{
				WorkerSpecs: []sim.WorkerSpec{{ID: "w1", Pool: "general", MaxParallel: 4}, {ID: "w2", Pool: "general", MaxParallel: 4}},
				Workload:    &sim.Workload{Jobs: 12, StatusReads: 20, CancelRate: 0.05, Topics: []string{"default", "gpu"}},
				Options:     sut.Options{MaxSchedulingRetries: 5},
			},
			Seeds: SeedRange{First: 3200, Count: 4},
		},
		placement,
		tenants,
		{
			Name:   "idempotency-reservation",
			Source: "seed 002",
			Description: "workflow runs under max concurrent runs 1: keys are reserved before the capacity check, so every " +
				"429 must free its key; admission writes and reads fail, so cleanups fail too",
			Faults:  []faults.Kind{faults.AdmissionWriteFailsBeforeApply, faults.StoreReadFails},
			Options: often(0.05, faults.StoreReadFails),
			World:   admissionWorld,
			Needs:   []Feature{FeatureRunAdmission},
			Seeds:   SeedRange{First: 2500, Count: 8},
		},
		{
			Name:   "admission-crash",
			Source: "seed 002",
			Description: "the gateway dies between reserving an idempotency key and creating the run; the client retries " +
				"with the same key and must get one run, and the orphaned reservation must not block the key for good",
			Faults: []faults.Kind{faults.GatewayCrashAfterReserve},
			World:  admissionWorld,
			Needs:  []Feature{FeatureRunAdmission},
			Seeds:  SeedRange{First: 2600, Count: 8},
		},
		{
			Name:   "run-admission-contract",
			Source: "seed 002",
			Description: "run starts from three orgs (one without a limit) over four workflows: a key reused for another " +
				"payload, workflow or org must get 409 mismatch once bound, a workflow cannot be registered to a second " +
				"org, invalid and oversized starts are refused before the store, starts without a key each get their " +
				"run, keys holding another writer's values are refused as used; the gateway dies after reserving and " +
				"admission writes fail, so stale reservations are taken over or swept, never early, and the counters " +
				"must say what happened",
			Faults: []faults.Kind{faults.GatewayCrashAfterReserve, faults.AdmissionWriteFailsBeforeApply},
			World: World{Workload: &sim.Workload{Jobs: 8, StatusReads: 4, CancelRate: 0.05, Runs: 20, RunKeys: 6, RunLimit: 1,
				RunOrgs: 3, RunUnlimitedOrgs: 1, RunWorkflows: 4, RunReuse: 0.25, RunInvalid: 5, RunsWithoutKey: 4,
				RunForeignKeys: 5}},
			Needs: []Feature{FeatureRunAdmission},
			Seeds: SeedRange{First: 2700, Count: 10},
		},
		{
			Name:        "terminal-resurrection",
			Source:      "seed 004",
			Description: "workers report a retryable failure after success, duplicate and late results; acks are lost and deliveries duplicated",
			Faults: []faults.Kind{faults.WorkerRetryableAfterSuccess, faults.WorkerResultDuplicated, faults.WorkerResultLate,
				faults.AckLost, faults.DeliveryDuplicated},
			// Acks lost often enough to reach a system whose only job
			// messages are results (its workers pull their dispatches).
			Options: func(o faults.Options) faults.Options {
				return often(0.04, faults.AckLost)(often(0.2, faults.WorkerRetryableAfterSuccess)(o))
			},
			Seeds: SeedRange{First: 4000, Count: 10},
		},
		workerOutcomes,
		cancels,
		{
			Name:        "lock-expiry",
			Source:      "DEF-3",
			Description: "replicas pause past the lock TTL, crash at yield points and run with skewed clocks: two handlers must never both act on a job",
			Faults: []faults.Kind{faults.ReplicaPauseBeyondLockTTL, faults.ReplicaCrash, faults.ReplicaCrashAfterApply,
				faults.ClockSkew, faults.StoreLatency},
			Options: often(0.01, faults.ReplicaPauseBeyondLockTTL, faults.ReplicaCrash, faults.ReplicaCrashAfterApply),
			Seeds:   SeedRange{First: 5000, Count: 10},
		},
		pauseMidDispatch,
		lockRenewals,
		{
			Name:        "ambiguous-publish-dedup",
			Source:      "seed 000",
			Description: "the broker stores a dispatch but returns an error; its de-duplication window drops the retry's copy",
			Faults:      []faults.Kind{faults.PublishFailsAfterStored},
			Options:     often(0.3, faults.PublishFailsAfterStored),
			Seeds:       SeedRange{First: 6000, Count: 8},
		},
		{
			Name:   "ambiguous-publish-no-dedup",
			Source: "seed 000",
			Description: "the same ambiguous publish with de-duplication off at the broker and the worker: exactly-once is impossible " +
				"by construction, and the harness must say so by finding the duplicate",
			Faults:          []faults.Kind{faults.PublishFailsAfterStored},
			Options:         often(0.3, faults.PublishFailsAfterStored),
			World:           World{NoBrokerDedup: true, NoWorkerDedup: true},
			ExpectViolation: "exactly_once_publish",
			Needs:           []Feature{FeatureDispatchOverBus, FeatureExactlyOnce},
			Seeds:           SeedRange{First: 6100, Count: 8},
		},
		{
			Name:        "reconciler-vs-late-result",
			Source:      "reconciler",
			Description: "short dispatch and running timeouts make the reconciler race late results; neither may overwrite the other",
			Faults:      []faults.Kind{faults.WorkerResultLate, faults.RunningWriteFails},
			Options:     often(0.3, faults.WorkerResultLate),
			World: World{Options: sut.Options{DispatchTimeout: 20 * time.Second, RunningTimeout: 40 * time.Second,
				ReconcileInterval: 5 * time.Second}},
			Spec:  checker.Spec{DispatchTimeout: 20 * time.Second, ReconcileInterval: 5 * time.Second},
			Seeds: SeedRange{First: 7000, Count: 10},
		},
		topicTimeouts,
		skewedGrace,
		skewedTimeouts,
		actorIO,
		mappingRollout,
		{
			Name:        "store-outage",
			Source:      "DESIGN §4",
			Description: "the store fails every command for a window, replies are lost after apply, writes fail before apply",
			Faults: []faults.Kind{faults.StoreOutage, faults.StoreReplyLostAfterApply, faults.StoreWriteFailsBeforeApply,
				faults.PublishLatency, faults.DeliveryDelayed},
			Seeds: SeedRange{First: 8000, Count: 8},
		},
		{
			Name:        "worker-failures",
			Source:      "DESIGN §4",
			Description: "workers crash mid-job and stop heartbeating; jobs must end (reconciler) and never run twice",
			Faults:      []faults.Kind{faults.WorkerCrashMidJob, faults.WorkerHeartbeatsStop, faults.ReplicaCrashBeforeAck, faults.ReplicaCrashBeforePublish},
			Options:     often(0.05, faults.ReplicaCrashBeforePublish, faults.ReplicaCrashBeforeAck),
			Seeds:       SeedRange{First: 8500, Count: 8},
		},
		{
			Name:   "rolling-deploy",
			Source: "DESIGN §4",
			Description: "a rolling deploy written as events: each replica stopped with a 30s drain and started again in " +
				"turn, replica-3 on the old config (a shorter lock TTL and dispatch timeout) until it is replaced, a GC " +
				"pause on replica-1 and a store failover's worth of skew, under ambiguous publishes, lost acks, late " +
				"and retryable results and a window of retryable failures",
			Faults: []faults.Kind{faults.PublishFailsAfterStored, faults.AckLost, faults.WorkerResultLateAndRetryable,
				faults.WorkerRetryableWindow, faults.ReplicaCrashBeforeAck},
			Options: often(0.05, faults.WorkerResultLateAndRetryable, faults.PublishFailsAfterStored),
			World: World{
				ReplicaSkew:    []time.Duration{0, 40 * time.Second, -25 * time.Second},
				ReplicaOptions: map[int]sut.Options{3: {LockTTL: 15 * time.Second, DispatchTimeout: 120 * time.Second}},
				Events: []sim.Event{
					{At: 45 * time.Second, Action: sim.EventStop, Replica: 1, For: 30 * time.Second},
					{At: 90 * time.Second, Action: sim.EventStart, Replica: 1},
					{At: 100 * time.Second, Action: sim.EventPause, Replica: 1, For: 20 * time.Second},
					{At: 130 * time.Second, Action: sim.EventStop, Replica: 2, For: 30 * time.Second},
					{At: 175 * time.Second, Action: sim.EventStart, Replica: 2},
					{At: 200 * time.Second, Action: sim.EventKill, Replica: 3},
					{At: 230 * time.Second, Action: sim.EventStart, Replica: 3},
				},
			},
			Seeds: SeedRange{First: 8700, Count: 8},
		},
		{
			Name:   "store-failover",
			Source: "DESIGN §5",
			Description: "the store fails over to a copy that lagged by up to 2s and forgets the writes it acknowledged " +
				"meanwhile: what follows on the jobs and keys it forgot is the environment's, every other job is still " +
				"held to the whole contract",
			Faults:    []faults.Kind{faults.StoreLosesAckedWrites, faults.PublishLatency, faults.StoreLatency},
			Sometimes: []string{"store_loss_touched"},
			World:     World{Workload: &sim.Workload{Jobs: 40, StatusReads: 30, CancelRate: 0.05, Runs: 6, RunLimit: 2}},
			Seeds:     SeedRange{First: 8800, Count: 8},
		},
		{
			Name:   "broker-failures",
			Source: "issue: JetStream's failure modes",
			Description: "the broker's own failures from the field: a crash that loses the publishes it acknowledged " +
				"since its last flush (what rests on those messages is the environment's, on their jobs only), a restart " +
				"that forgets recent acks and redelivers those messages, and acks that arrive after the ack wait and " +
				"settle a message another member holds (both within the contract: nothing excused); a store outage " +
				"keeps requests NAKed and ambiguous publishes are re-published, so the loss has messages to take",
			Faults: []faults.Kind{faults.BrokerLosesAckedPublishes, faults.BrokerRestartForgetsAcks,
				faults.AckLateAfterAckWait, faults.StoreOutage, faults.PublishFailsAfterStored},
			Options:   often(0.05, faults.AckLateAfterAckWait),
			Sometimes: []string{"broker_loss_touched"},
			World:     World{Workload: &sim.Workload{Jobs: 40, StatusReads: 30, CancelRate: 0.05}},
			Seeds:     SeedRange{First: 8900, Count: 8},
		},
		{
			Name:        "swarm",
			Source:      "exploratory",
			Description: "each seed draws which fault kinds are on and how often (swarm testing), with jobs and workflow runs",
			Swarm:       true,
			World:       World{Workload: &sim.Workload{Jobs: 30, StatusReads: 20, CancelRate: 0.05, Runs: 8, RunLimit: 2}},
			Seeds:       SeedRange{First: 9000, Count: 16},
		},
		{
			Name:   "sparse-swarm",
			Source: "exploratory",
			Description: "the swarm with every point fault 16 times rarer, as in production (window and setup faults " +
				"as in the swarm): a defect that needs two point faults in a row is rarer still",
			Swarm:   true,
			Options: func(o faults.Options) faults.Options { return o.Rarer(1.0 / sparseFactor) },
			World:   World{Workload: &sim.Workload{Jobs: 30, StatusReads: 20, CancelRate: 0.05, Runs: 8, RunLimit: 2}},
			Seeds:   SeedRange{First: 9200, Count: 8},
		},
		{
			Name:   "world-swarm",
			Source: "exploratory",
			Description: "each seed draws the whole world as well as the fault mix: replicas, workers and pools (some " +
				"without workers), unplaceable jobs, long jobs, broker de-duplication and its window, ack wait, max " +
				"deliver, the engine's window, retry cap, timeouts, lock TTL and per-replica clock skew",
			Swarm:      true,
			WorldSwarm: true,
			World:      World{Workload: &sim.Workload{Runs: 8, RunLimit: 2}},
			Seeds:      SeedRange{First: 9500, Count: 8},
		},
		submitRetries,
	}
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// admissionWorld is a light job load with many workflow-run starts that share
// idempotency keys under one concurrent run per org.
var admissionWorld = World{Workload: &sim.Workload{Jobs: 8, StatusReads: 4, CancelRate: 0.05, Runs: 16, RunKeys: 6,
	RunLimit: 1}}
