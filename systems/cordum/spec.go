package cordum

import (
	"time"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// streams is the engine's deployed topology (engine.Streams): every
// dispatch subject in one stream, one duplicate window for them all.
func streams() []sut.Stream {
	var out []sut.Stream
	for _, s := range engine.Streams() {
		out = append(out, sut.Stream{Name: s.Name, Subjects: s.Subjects})
	}
	return out
}

// The engine's AdmissionConfig defaults the gateway runs on, as the
// engine documents them (Cordum's gateway values); a test holds them to the
// configuration in force.
const (
	defaultMaxRunRequestBytes    = 1 << 20          // MaxRequestBytes
	defaultAdmissionLockWait     = 2 * time.Second  // AdmissionLockWait
	defaultStaleReservationAfter = 20 * time.Second // StaleReservationAfter: 2 x AdmissionLockTTL (10s)
)

// Spec is the engine's promise: states and transitions from engine/states.go,
// one job lock, the dispatch published by the handler that wrote DISPATCHED
// (rolled back on a failed publish).
func (System) Spec(o sut.Options) sut.Spec {
	s := sut.Spec{
		Transitions: map[string][]string{},
		Scheduled:   string(engine.StateScheduled), Dispatched: string(engine.StateDispatched),
		Retrying: string(engine.StateRetrying), Running: string(engine.StateRunning), Succeeded: string(engine.StateSucceeded),
		Cancelled: string(engine.StateCancelled), Failed: string(engine.StateFailed),
		TimedOut:              string(engine.StateTimeout),
		DispatchTimeout:       engine.DefaultDispatchTimeout,
		ReconcileInterval:     engine.DefaultReconcileInterval,
		RetryCapReason:        string(engine.ReasonMaxSchedulingRetries),
		ReasonWorkerFailed:    string(engine.ReasonJobFailed),
		ReasonDispatchTimeout: string(engine.ReasonDispatchTimeout),
		ReasonRunningTimeout:  string(engine.ReasonRunningTimeout),
		ReasonInvalidRequest:  string(engine.ReasonInvalidRequest),
		ReasonTenantLimit:     string(engine.ReasonTenantLimit),
		TenantActive:          []string{string(engine.StateDispatched), string(engine.StateRunning)},
		DLQSubject:            engine.SubjectDLQ,
		Streams:               streams(),
		// The worker fence (engine.DispatchCurrent) reads the job first.
		WorkerGate:           sut.GateRead,
		Overload:             sut.Overload{LoadRatio: engine.OverloadLoadRatio, CPU: engine.OverloadCPU, GPU: engine.OverloadGPU},
		LeastLoaded:          true,
		RepublishKeepsWorker: true,
		Requires:             true,
		WorkerTTL:            engine.DefaultWorkerTTL,
		RunningTimeout:       engine.DefaultRunningTimeout,
		MaxSchedulingRetries: engine.DefaultMaxSchedulingRetries,
		PickGrace:            engine.DefaultNoPoolMappingGrace,
		BackoffMax:           engine.DefaultBackoffMax,
		BackoffBase:          engine.DefaultBackoffBase,
		BackoffJitter:        engine.DefaultBackoffJitterMax,
		GraceReasons: []string{string(engine.ReasonNoPoolMappingTopic), string(engine.ReasonNoPoolMappingPreferred),
			string(engine.ReasonNoPoolMappingRequires)},
		ReasonTopicMissing:        string(engine.ReasonNoPoolMappingTopic),
		ReasonRequiresUnsatisfied: string(engine.ReasonNoPoolMappingRequires),
		JobLock:                   true,
		LockRenewFailures:         engine.DefaultLockRenewFailures,
		Sweeps: []sut.Sweep{
			{Actor: reconcilerActor, States: []string{string(engine.StateDispatched), string(engine.StateRunning)}},
			{Actor: replayerActor, States: []string{string(engine.StatePending), string(engine.StateScheduled),
				string(engine.StateRetrying)}, After: engine.DefaultReplayAfter},
		},
		// A replica's cancel handler writes the cancel; each generation is
		// stored once and run once.
		Cancels:  sut.CancelByReplica,
		Delivery: sut.ExactlyOnce,
		// A submit of a job the store holds is a no-op, whatever its state:
		// the job hash is kept, so a retried submit never makes it again.
		SubmitDedupWindow: sut.SubmitDedupForever,
		DLQReasons: []string{string(engine.ReasonNoWorkers), string(engine.ReasonPoolOverloaded),
			string(engine.ReasonPublishFailed), string(engine.ReasonStoreError), string(engine.ReasonUnknownResult)},
		// Measured: 303 replica writes for lock-expiry's 30 jobs (seed 5000):
		// the reference the catalog's per-write rates were set for.
		ReplicaWritesPerJob: 10,
		RunAdmission:        true,
		// The gateway runs on the engine's defaults (AdmissionConfig's
		// MaxRequestBytes, 1 MiB) and its key limit.
		RunRequests:           sut.RunRequestLimits{MaxBodyBytes: defaultMaxRunRequestBytes, MaxKeyBytes: engine.MaxIdempotencyKeyBytes},
		RunLimit:              orgRunLimit(o),
		RunAdmissionWait:      defaultAdmissionLockWait,
		StaleReservationAfter: defaultStaleReservationAfter,
		Metrics: sut.Metrics{Rollbacks: "scheduler_dispatch_rollback_total",
			RollbackFailures:  "scheduler_dispatch_rollback_failure_total",
			FailClosedReads:   "scheduler_state_read_fail_closed_total",
			Published:         "scheduler_dispatch_published_total",
			LockFenced:        "scheduler_lock_fenced_total",
			RedeliverySkipped: "scheduler_redelivery_skipped_total", RequestSubject: engine.SubjectSubmit,
			Withheld: map[string][]string{"scheduler_republish_withheld_total": nil, "scheduler_publish_withheld_total": nil,
				"scheduler_unknown_write_total": {"fenced", "unresolved"}},
			Branches: map[string]string{
				"scheduler_dispatch_rollback_total":         "publish_rollback",
				"scheduler_dispatch_rollback_failure_total": "rollback_failure",
				"scheduler_state_read_fail_closed_total":    "fail_closed_read",
				"scheduler_redelivery_skipped_total":        "redelivery",
				"scheduler_lock_fenced_total":               "lock_fenced",
				"scheduler_unknown_write_total":             "unknown_dispatched_write",
				"scheduler_result_ignored_total":            "result_ignored",
				"scheduler_reconciler_timeout_total":        "reconciler_timeout",
				"scheduler_republish_withheld_total":        "republish_withheld",
				"scheduler_publish_withheld_total":          "publish_withheld",
				"gateway_run_admission_total":               "run_429_cleanup",
				"gateway_idempotency_cleanup_failure_total": "idempotency_cleanup_failure",
			},
			RejectedRuns:    "gateway_run_admission_total",
			CleanupFailures: "gateway_idempotency_cleanup_failure_total"},
	}
	if o.DispatchTimeout != 0 {
		s.DispatchTimeout = o.DispatchTimeout
	}
	for topic, d := range o.DispatchTimeoutByTopic {
		if d > 0 { // the engine reads an override of zero or less as none
			if s.DispatchTimeoutByTopic == nil {
				s.DispatchTimeoutByTopic = map[string]time.Duration{}
			}
			s.DispatchTimeoutByTopic[topic] = d
		}
	}
	for tenant, n := range o.TenantMaxActive {
		if tenant != "" { // the engine caps no job of no tenant
			if s.TenantMaxActive == nil {
				s.TenantMaxActive = map[string]int{}
			}
			s.TenantMaxActive[tenant] = n
		}
	}
	if o.RunningTimeout != 0 {
		s.RunningTimeout = o.RunningTimeout
	}
	if o.MaxSchedulingRetries != 0 {
		s.MaxSchedulingRetries = o.MaxSchedulingRetries
	}
	if o.ReconcileInterval != 0 {
		s.ReconcileInterval = o.ReconcileInterval
	}
	for _, f := range engine.AllStates {
		s.States = append(s.States, string(f))
		if promisedTerminal[f] {
			s.Terminal = append(s.Terminal, string(f))
		}
	}
	for _, f := range append([]engine.JobState{""}, engine.AllStates...) {
		for _, t := range engine.AllStates {
			if promised(f, t) {
				s.Transitions[string(f)] = append(s.Transitions[string(f)], string(t))
			}
		}
	}
	return s
}

// The state graph the engine promises (Cordum's store-level table, see
// cordum-facts), written out here rather than read from engine/: a promise
// read from the code it judges moves with that code, so a defect in the
// engine's table would weaken the checker with it. TestSpecIsTheEnginesTable
// keeps the two equal.
var (
	promisedTerminal = map[engine.JobState]bool{engine.StateSucceeded: true, engine.StateFailed: true,
		engine.StateCancelled: true, engine.StateTimeout: true, engine.StateDenied: true}
	promisedTransitions = map[engine.JobState][]engine.JobState{
		"":                    {engine.StatePending, engine.StateCancelled, engine.StateFailed},
		engine.StatePending:   {engine.StateScheduled, engine.StateFailed, engine.StateCancelled, engine.StateDenied},
		engine.StateScheduled: {engine.StateScheduled, engine.StateDispatched, engine.StateSucceeded, engine.StateFailed, engine.StateRetrying, engine.StateCancelled, engine.StateDenied},
		engine.StateDispatched: {engine.StateRunning, engine.StateScheduled, engine.StateSucceeded, engine.StateFailed,
			engine.StateRetrying, engine.StateCancelled, engine.StateTimeout},
		engine.StateRunning: {engine.StateRunning, engine.StateSucceeded, engine.StateFailed, engine.StateRetrying,
			engine.StateCancelled, engine.StateTimeout},
		engine.StateRetrying: {engine.StateScheduled, engine.StateFailed, engine.StateCancelled},
	}
)

func promised(from, to engine.JobState) bool {
	for _, t := range promisedTransitions[from] {
		if t == to {
			return true
		}
	}
	return false
}
