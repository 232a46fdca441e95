package faults

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/sut"
)

// What a kind needs is read from the spec: a running state, cancels a
// replica writes, a job lock, a rollback, run admission.
func TestKindsNeedWhatTheySpecAimsAt(t *testing.T) {
	full := sut.Spec{Scheduled: "S", Dispatched: "D", Running: "R", Cancelled: "C", JobLock: true, RunAdmission: true,
		WorkerGate: sut.GateClaim, Transitions: map[string][]string{"D": {"S"}}, SubmitDedupWindow: sut.SubmitDedupForever}
	for _, k := range Catalog() {
		require.True(t, k.AppliesTo(full), "%s needs %q", k.Name, k.Needs())
	}
	lacking := sut.Spec{Scheduled: "S", Dispatched: "D", Cancelled: "C", Cancels: sut.CancelByGateway}
	var dropped []string
	for _, k := range Catalog() {
		if !k.AppliesTo(lacking) {
			require.NotEmpty(t, k.Needs(), k.Name)
			dropped = append(dropped, k.Name)
		}
	}
	require.ElementsMatch(t, []string{"RunningWriteFails", "CancelWriteFails", "LockRenewalFails",
		"ReplicaPauseBeyondLockTTL", "RollbackWriteFails", "RollbackWriteReplyLost", "AdmissionWriteFailsBeforeApply",
		"GatewayCrashAfterReserve", "WorkerStoreFails", "WorkerStoreReplyLost", "SubmitRetriedLate"}, dropped)
	require.Equal(t, "cancels written by a replica", CancelWriteFails.Needs())
	require.Equal(t, "a running state (the spec's Running role)", RunningWriteFails.Needs())
}

// A per-write kind's rate follows the system's writes: scaled up for one
// that writes less than the reference, capped at 1, untouched otherwise.
func TestFitRatesScalesPerWriteKinds(t *testing.T) {
	o := Only(ReplicaCrash, ReplicaCrashAfterApply, StoreLatency).Enable(ReplicaCrashAfterApply, KindOptions{Probability: 0.01})
	for _, w := range []int{0, ReferenceWritesPerJob, 3 * ReferenceWritesPerJob} {
		require.Equal(t, o, FitRates(o, sut.Spec{ReplicaWritesPerJob: w}), "writes %d", w)
	}
	fit := FitRates(o, sut.Spec{ReplicaWritesPerJob: 2})
	require.InDelta(t, 0.05, fit.Kinds["ReplicaCrashAfterApply"].Probability, 1e-12)
	require.InDelta(t, ReplicaCrash.Defaults.Probability*5, fit.Kinds["ReplicaCrash"].Probability, 1e-12, "its default, scaled")
	require.Zero(t, fit.Kinds["StoreLatency"].Probability, "not a per-write kind: left at its default")
	require.Zero(t, o.Kinds["ReplicaCrash"].Probability, "the caller's options are not changed")
	all := FitRates(Only(ReplicaCrash).Enable(ReplicaCrash, KindOptions{Probability: 0.5}), sut.Spec{ReplicaWritesPerJob: 1})
	require.Equal(t, 1.0, all.Kinds["ReplicaCrash"].Probability)
	require.True(t, ReplicaCrashAfterApply.PerWrite())
	require.False(t, StoreLatency.PerWrite())
}
