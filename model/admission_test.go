package model

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

func TestAdmissionDescribe(t *testing.T) {
	ops := []struct {
		op   porcupine.Operation
		want string
	}{
		{StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"), "start_run k1 → 200 run-7"},
		{StartRunOp(0, 1, 2, "k1", "fp", 429, ""), "start_run k1 → 429"},
		{StartRunOp(0, 1, 2, "", "fp", 200, "run-8"), "start_run (no key) → 200 run-8"},
		{StartRunUnknownOp(0, 1, "k1", "fp"), "start_run k1 → ? (unknown)"},
		{StartRunMismatchOp(0, 1, 2, "k1", "fp"), "start_run k1 → 409 mismatch"},
		{CompleteRunOp(0, 1, 2, "k1", "run-7"), "complete_run k1 run-7"},
	}
	for _, c := range ops {
		require.Equal(t, c.want, RunAdmission.DescribeOperation(c.op.Input, c.op.Output))
	}
	require.Equal(t, "(unbound)", RunAdmission.DescribeState(admissionState{}))
	require.Equal(t, "run-7 fp=ab12", RunAdmission.DescribeState(admissionState{RunID: "run-7", Fingerprint: "ab12"}))
}

func TestStartRunUnknownReturnsAtInfinity(t *testing.T) {
	op := StartRunUnknownOp(2, 9, "k1", "fp")
	require.Equal(t, int64(9), op.Call)
	require.Equal(t, Infinity, op.Return)
	require.True(t, op.Output.(AdmissionOutput).Unknown)
}

func TestRunAdmissionLegal(t *testing.T) {
	cases := map[string][]porcupine.Operation{
		"429 between two 200s with the same id": {
			StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"),
			StartRunOp(1, 3, 4, "k1", "fp", 429, ""),
			StartRunOp(2, 5, 6, "k1", "fp", 200, "run-7"),
		},
		"unknown start that bound, revealed by a later 200": {
			StartRunUnknownOp(0, 1, "k1", "fp"),
			StartRunOp(1, 10, 11, "k1", "fp", 200, "run-7"),
			StartRunOp(2, 12, 13, "k1", "fp", 200, "run-7"),
		},
		// It may as well not have bound: another payload then owns the key.
		"unknown start that did not bind": {
			StartRunUnknownOp(0, 1, "k1", "fp-a"),
			StartRunOp(1, 10, 11, "k1", "fp-b", 200, "run-9"),
		},
		"rejections and failures have no effect": {
			StartRunOp(0, 1, 2, "k1", "fp", 503, ""),
			StartRunOp(0, 3, 4, "k1", "fp", 500, ""),
			StartRunOp(0, 5, 6, "k1", "fp", 400, ""),
			StartRunOp(0, 7, 8, "k1", "fp", 404, ""),
			StartRunOp(0, 9, 10, "k1", "fp", 200, "run-7"),
			StartRunOp(1, 11, 12, "k1", "other", 409, ""),
			StartRunOp(1, 13, 14, "k1", "fp", 409, ""),
		},
		"complete_run leaves the binding": {
			StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"),
			CompleteRunOp(3, 3, 4, "k1", "run-7"),
			StartRunOp(0, 5, 6, "k1", "fp", 200, "run-7"),
		},
		// Concurrent first requests: whichever linearizes first binds.
		"concurrent starts agree": {
			StartRunOp(0, 1, 10, "k1", "fp", 200, "run-7"),
			StartRunOp(1, 2, 9, "k1", "fp", 200, "run-7"),
		},
		"keys are independent": {
			StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"),
			StartRunOp(1, 3, 4, "k2", "fp", 200, "run-8"),
		},
		"mismatch for another intent once bound": {
			StartRunOp(0, 1, 2, "k1", "fp-a", 200, "run-7"),
			StartRunMismatchOp(1, 3, 4, "k1", "fp-b"),
			StartRunOp(0, 5, 6, "k1", "fp-a", 200, "run-7"),
		},
		// Another intent may hold the key unseen (a lost reply, in flight),
		// and that request may never bind it.
		"mismatch before the binding, for its own intent": {
			StartRunUnknownOp(2, 1, "k1", "fp-b"),
			StartRunMismatchOp(1, 3, 4, "k1", "fp-a"),
			StartRunOp(0, 5, 6, "k1", "fp-a", 200, "run-7"),
		},
		"requests without a key are distinct runs": {
			StartRunOp(0, 1, 2, "", "fp", 200, "run-7"),
			StartRunOp(1, 3, 4, "", "fp", 200, "run-8"),
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			require.True(t, porcupine.CheckOperations(RunAdmission, h))
		})
	}
}

func TestRunAdmissionIllegal(t *testing.T) {
	cases := map[string][]porcupine.Operation{
		"two 200s with different run ids": {
			StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"),
			StartRunOp(1, 3, 4, "k1", "fp", 200, "run-8"),
		},
		"concurrent 200s with different run ids": {
			StartRunOp(0, 1, 10, "k1", "fp", 200, "run-7"),
			StartRunOp(1, 2, 9, "k1", "fp", 200, "run-8"),
		},
		"different run id after an unknown and a 429": {
			StartRunUnknownOp(0, 1, "k1", "fp"),
			StartRunOp(1, 2, 3, "k1", "fp", 200, "run-7"),
			StartRunOp(2, 4, 5, "k1", "fp", 429, ""),
			StartRunOp(1, 6, 7, "k1", "fp", 200, "run-8"),
		},
		"replay for another payload": {
			StartRunOp(0, 1, 2, "k1", "fp-a", 200, "run-7"),
			StartRunOp(1, 3, 4, "k1", "fp-b", 200, "run-7"),
		},
		"mismatch for the binding's own intent": {
			StartRunOp(0, 1, 2, "k1", "fp-a", 200, "run-7"),
			StartRunMismatchOp(1, 3, 4, "k1", "fp-a"),
		},
		"200 without a run id": {
			StartRunOp(0, 1, 2, "k1", "fp", 200, ""),
		},
		"violation in one key among many": {
			StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"),
			StartRunOp(0, 1, 2, "k2", "fp", 200, "run-8"),
			StartRunOp(1, 3, 4, "k2", "fp", 200, "run-9"),
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			require.False(t, porcupine.CheckOperations(RunAdmission, h))
			res, _ := porcupine.CheckOperationsVerbose(RunAdmission, h, 0)
			require.Equal(t, porcupine.Illegal, res)
		})
	}
}

func TestRunAdmissionEvents(t *testing.T) {
	h := []porcupine.Operation{
		StartRunOp(0, 1, 2, "k1", "fp", 200, "run-7"),
		StartRunOp(1, 3, 4, "k2", "fp", 200, "run-8"),
	}
	require.True(t, porcupine.CheckEvents(RunAdmission, events(h)))
	unpartitioned := RunAdmission
	unpartitioned.PartitionEvent = nil
	require.False(t, porcupine.CheckEvents(unpartitioned, events(h)))
}

// A lost reply is a no-op whatever its Status and RunID fields hold.
func TestStartRunUnknownIgnoresReplyFields(t *testing.T) {
	bound := admissionState{RunID: "run-7", Fingerprint: "fp"}
	in := AdmissionInput{Op: AdmissionStartRun, Key: "k1", Fingerprint: "other"}
	ok, next := stepAdmission(bound, in, AdmissionOutput{Status: 200, RunID: "run-9", Unknown: true})
	require.True(t, ok)
	require.Equal(t, bound, next)
}
