package model

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// AdmissionOpKind names a run admission operation.
type AdmissionOpKind string

// The run admission operations.
const (
	AdmissionStartRun    AdmissionOpKind = "start_run"
	AdmissionCompleteRun AdmissionOpKind = "complete_run" // never touches the key binding
)

// AdmissionInput is the input of every run admission operation.
type AdmissionInput struct {
	Op  AdmissionOpKind
	Key string // idempotency key, the partition key; "" is "no key"
	// Fingerprint is a start_run's intent: what identifies the run it asks
	// for (its payload, and the org and workflow it names). A key stands for
	// one intent: a retry of it is a replay, another is refused.
	Fingerprint string
	RunID       string // complete_run: the run completed
}

// AdmissionOutput is a start_run reply; complete_run carries the zero value.
type AdmissionOutput struct {
	Status int    // HTTP status
	RunID  string // set with 200
	// Mismatch marks a 409 refusing the key because it stands for another
	// intent.
	Mismatch bool
	Unknown  bool // the reply was lost: Status and RunID mean nothing
}

// StartRunOp is a start_run that got a reply.
func StartRunOp(client int, call, ret int64, key, fingerprint string, status int, runID string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    AdmissionInput{Op: AdmissionStartRun, Key: key, Fingerprint: fingerprint},
		Call:     call,
		Output:   AdmissionOutput{Status: status, RunID: runID},
		Return:   ret,
	}
}

// StartRunMismatchOp is a start_run refused with 409 because its key stands
// for another intent.
func StartRunMismatchOp(client int, call, ret int64, key, fingerprint string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    AdmissionInput{Op: AdmissionStartRun, Key: key, Fingerprint: fingerprint},
		Call:     call,
		Output:   AdmissionOutput{Status: 409, Mismatch: true},
		Return:   ret,
	}
}

// StartRunUnknownOp is a start_run whose reply was lost; it returns at
// Infinity.
func StartRunUnknownOp(client int, call int64, key, fingerprint string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    AdmissionInput{Op: AdmissionStartRun, Key: key, Fingerprint: fingerprint},
		Call:     call,
		Output:   AdmissionOutput{Unknown: true},
		Return:   Infinity,
	}
}

// CompleteRunOp is the completion of the run bound to key. It constrains
// nothing; it is in the history for the visualization.
func CompleteRunOp(client int, call, ret int64, key, runID string) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    AdmissionInput{Op: AdmissionCompleteRun, Key: key, RunID: runID},
		Call:     call,
		Output:   AdmissionOutput{},
		Return:   ret,
	}
}

func keyOf(input any) string { return input.(AdmissionInput).Key }

// PartitionByKey splits a history into one partition per idempotency key, in
// order of first appearance.
func PartitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	return partitionBy(history, keyOf)
}

// PartitionEventsByKey is PartitionByKey for event histories.
func PartitionEventsByKey(history []porcupine.Event) [][]porcupine.Event {
	return partitionEventsBy(history, keyOf)
}

// admissionState is what one idempotency key is bound to; the zero value is
// unbound.
type admissionState struct {
	RunID       string
	Fingerprint string
}

// stepAdmission is a set-once register. Only a 200 observes the binding, so a
// lost reply is a no-op: had it bound run X, the first 200 that reveals X binds
// the register to X here anyway, and until then nothing can tell the two
// apart. That makes the deterministic model exact, without a
// NondeterministicModel that would have to guess the unseen run id. A 409
// mismatch observes the binding too: once bound, only a request of another
// intent may be refused as one (unbound, some request of another intent may
// hold the key unseen).
func stepAdmission(state, input, output any) (bool, any) {
	st := state.(admissionState)
	in := input.(AdmissionInput)
	switch in.Op {
	case AdmissionCompleteRun:
		return true, st
	case AdmissionStartRun:
	default:
		panic(fmt.Sprintf("model: unknown admission operation %q", in.Op))
	}
	out := output.(AdmissionOutput)
	// Without a key every request is its own run: nothing to agree on.
	if out.Unknown || in.Key == "" {
		return true, st
	}
	if out.Mismatch {
		return st.RunID == "" || st.Fingerprint != in.Fingerprint, st
	}
	if out.Status != 200 {
		return true, st
	}
	if out.RunID == "" {
		return false, st // a 200 must name its run
	}
	if st.RunID == "" {
		return true, admissionState{RunID: out.RunID, Fingerprint: in.Fingerprint}
	}
	// A replay must carry the same payload: the engine answers 409 otherwise.
	return st.RunID == out.RunID && st.Fingerprint == in.Fingerprint, st
}

func describeKey(key string) string {
	if key == "" {
		return "(no key)"
	}
	return key
}

func describeAdmissionOperation(input, output any) string {
	in := input.(AdmissionInput)
	if in.Op == AdmissionCompleteRun {
		return fmt.Sprintf("complete_run %s %s", describeKey(in.Key), in.RunID)
	}
	out, _ := output.(AdmissionOutput)
	switch {
	case out.Unknown:
		return fmt.Sprintf("start_run %s → ? (unknown)", describeKey(in.Key))
	case out.Mismatch:
		return fmt.Sprintf("start_run %s → %d mismatch", describeKey(in.Key), out.Status)
	case out.RunID != "":
		return fmt.Sprintf("start_run %s → %d %s", describeKey(in.Key), out.Status, out.RunID)
	}
	return fmt.Sprintf("start_run %s → %d", describeKey(in.Key), out.Status)
}

func describeAdmissionState(state any) string {
	st := state.(admissionState)
	if st.RunID == "" {
		return "(unbound)"
	}
	return fmt.Sprintf("%s fp=%s", st.RunID, st.Fingerprint)
}

// RunAdmission is run admission per idempotency key as a set-once register:
// every 200 agrees on one run id (and the intent that bound it), a 409
// mismatch never refuses the binding's own intent; any other status, a lost
// reply and complete_run change nothing.
var RunAdmission = porcupine.Model{
	Partition:         PartitionByKey,
	PartitionEvent:    PartitionEventsByKey,
	Init:              func() any { return admissionState{} },
	Step:              stepAdmission,
	DescribeOperation: describeAdmissionOperation,
	DescribeState:     describeAdmissionState,
}
