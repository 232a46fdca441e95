package checker

import (
	"maps"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/model"
	"github.com/dispatchsim/dispatchsim/sut"
)

// LinOutcome is the linearizability verdict.
type LinOutcome string

// Outcomes. Unknown (a partition's check ran out of time) is never a pass.
const (
	LinOk      LinOutcome = "ok"
	LinIllegal LinOutcome = "illegal"
	LinUnknown LinOutcome = "unknown"
	LinSkipped LinOutcome = "skipped" // an assumption failed first
)

// Partition is one job's (or idempotency key's) history and its verdict. Info
// feeds porcupine's visualization.
type Partition struct {
	Kind    string // "job" or "run"
	Key     string
	Ops     int
	Outcome LinOutcome
	Model   porcupine.Model
	History []porcupine.Operation
	Info    porcupine.LinearizationInfo
}

// The store is client 0 in a job's history; gateway clients keep their ids + 1.
const storeClient = 0

// Times on porcupine's axis are steps, doubled so that an event inside a step
// can sit strictly between that step's call and return.
func callAt(step uint64) int64   { return int64(step) * 2 }
func returnAt(step uint64) int64 { return int64(step)*2 + 1 }

// jobHistories turns the ground truth into one porcupine history per job: the
// store's commits (instantaneous) and the clients' submits, reads and cancels.
// A compound step (one write through two states, the spec says) is two
// commits inside its step.
func jobHistories(h *history.History, jobStates map[string][]history.StateChange, ids []string, spec sut.Spec) map[string][]porcupine.Operation {
	out := map[string][]porcupine.Operation{}
	for _, id := range ids {
		for _, s := range jobStates[id] {
			if via, ok := spec.CompoundSteps[s.To]; ok {
				out[id] = append(out[id], model.CommitOp(storeClient, callAt(s.Step), id, s.From, via),
					model.CommitOp(storeClient, returnAt(s.Step), id, via, s.To))
				continue
			}
			out[id] = append(out[id], model.CommitOp(storeClient, callAt(s.Step), id, s.From, s.To))
		}
	}
	for _, op := range h.Ops {
		client := op.Client + 1
		var o porcupine.Operation
		switch op.Kind {
		case history.OpStatus:
			if op.Unknown {
				o = model.ReadUnknownOp(client, callAt(op.CallStep), op.Key)
			} else {
				o = model.ReadOp(client, callAt(op.CallStep), returnAt(op.RetStep), op.Key, op.Output)
			}
		case history.OpSubmit:
			o = model.SubmitOp(client, callAt(op.CallStep), returnAt(op.RetStep), op.Key)
		case history.OpCancel:
			o = model.CancelOp(client, callAt(op.CallStep), returnAt(op.RetStep), op.Key)
		default:
			continue
		}
		out[op.Key] = append(out[op.Key], o)
	}
	return out
}

// checkLinearizability checks every job's history against the lifecycle model
// and every idempotency key's against run admission, each partition within
// the time budget.
func checkLinearizability(c *run) {
	hist := jobHistories(c.in.History, c.jobStates, c.jobIDs, c.in.System)
	sys := c.in.System
	// The lifecycle over the system's own graph; a terminal state moves nowhere.
	lifecycle := model.JobLifecycle(func(from, to string) bool { return !sys.IsTerminal(from) && sys.Allowed(from, to) })
	c.out.Linearizability = LinOk
	for _, id := range slices.Sorted(maps.Keys(hist)) {
		ops := hist[id]
		res, info := porcupine.CheckOperationsVerbose(lifecycle, ops, c.spec.LinearizabilityTimeout)
		p := Partition{Kind: "job", Key: id, Ops: len(ops), Model: lifecycle, History: ops, Info: info}
		p.Outcome = c.judgePartition(res)
		if p.Outcome == LinIllegal {
			c.violate(LayerLinearization, "job_lifecycle", id, lastStep(c.jobStates[id]), c.in.History.End,
				"job %s: the clients' reads and the store's commits have no linearization", id)
		}
		c.out.Partitions = append(c.out.Partitions, p)
	}
	checkRunAdmission(c)
}

// judgePartition folds one partition's verdict into the run's: Illegal wins,
// then Unknown, which is never a pass.
func (c *run) judgePartition(res porcupine.CheckResult) LinOutcome {
	switch res {
	case porcupine.Ok:
		return LinOk
	case porcupine.Illegal:
		c.out.Linearizability = LinIllegal
		return LinIllegal
	}
	if c.out.Linearizability == LinOk {
		c.out.Linearizability = LinUnknown
	}
	return LinUnknown
}

func lastStep(changes []history.StateChange) uint64 {
	if len(changes) == 0 {
		return 0
	}
	return changes[len(changes)-1].Step
}
