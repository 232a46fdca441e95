package reports

import (
	"strings"

	"github.com/dispatchsim/dispatchsim/history"
)

// faultIndex answers which jobs a fired fault was about. A fault record's
// target is often only a subject ("worker.w1.jobs"), so the plan entry fired
// at the same step (whose target names the job) and the publish attempt the
// fault hit are read too.
type faultIndex struct {
	records []history.FaultRecord
	planAt  map[uint64][]string // step -> targets of point entries fired there
	byJob   map[string][]int    // token (job id, key) -> fault indices, in order
}

type stepActor struct {
	step  uint64
	actor string
}

func newFaultIndex(h *history.History, plan history.Plan) *faultIndex {
	x := &faultIndex{records: h.Faults, planAt: map[uint64][]string{}, byJob: map[string][]int{}}
	for _, e := range plan.Entries {
		if !e.Setup {
			x.planAt[e.Step] = append(x.planAt[e.Step], e.Target)
		}
	}
	publishAt := map[stepActor]string{}
	for _, p := range h.Publishes {
		if p.JobID != "" {
			publishAt[stepActor{p.Step, p.Actor}] = p.JobID
		}
	}
	for i, f := range h.Faults {
		seen := map[string]bool{}
		add := func(tok string) {
			if tok != "" && !seen[tok] {
				seen[tok] = true
				x.byJob[tok] = append(x.byJob[tok], i)
			}
		}
		for _, tok := range tokens(f.Target) {
			add(tok)
		}
		for _, t := range x.planAt[f.Step] {
			for _, tok := range tokens(t) {
				add(tok)
			}
		}
		if f.Point == history.PointPublish {
			add(publishAt[stepActor{f.Step, f.Actor}])
		}
	}
	return x
}

// of lists the faults that were about job, in the order they fired.
func (x *faultIndex) of(job string) []int {
	if job == "" {
		return nil
	}
	return x.byJob[job]
}

// target is fault i's target, as the plan spells it when the plan says more
// ("worker.w1.jobs j-15" rather than the record's "worker.w1.jobs").
func (x *faultIndex) target(i int) string {
	f := x.records[i]
	for _, t := range x.planAt[f.Step] {
		if len(t) > len(f.Target) && strings.HasPrefix(t, f.Target) {
			return t
		}
	}
	return f.Target
}

// at lists the indices of the faults fired at step.
func (x *faultIndex) at(step uint64) []int {
	var out []int
	for i, f := range x.records {
		if f.Step == step {
			out = append(out, i)
		}
	}
	return out
}

// tokens splits a target as the checker does (checker.mentions): a job is
// named by a whole token, so j-1 does not match j-10.
func tokens(target string) []string {
	return strings.FieldsFunc(target, func(r rune) bool { return r == ' ' || r == ':' || r == '/' })
}
