package faults

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim"
)

// The plan's types live in package history, with the rest of a run's record.
type (
	Plan      = history.Plan
	PlanEntry = history.PlanEntry
)

// PlanVersion is the format version of encoded plans.
const PlanVersion = history.PlanVersion

// planFault is the simulator's fault entry e forces at its point.
func planFault(e PlanEntry) sim.Fault {
	return sim.Fault{Kind: e.Kind, Effect: e.Effect, Duration: time.Duration(e.DurationMs) * time.Millisecond,
		Also: e.Also}
}

// pointKey is a point fault's identity.
type pointKey struct {
	point         sim.PointKind
	group, target string
	occurrence    int
}

func planKey(e PlanEntry) pointKey { return pointKey{e.Point, e.Group, e.Target, e.Occurrence} }

// DecodePlan reads a plan written by Encode (or json.Marshal), refusing any
// kind this build does not know.
func DecodePlan(b []byte) (Plan, error) {
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return p, err
	}
	for i, e := range p.Entries {
		if _, ok := Lookup(e.Kind); !ok {
			return Plan{}, fmt.Errorf("decode fault plan: entry %d names fault kind %q, which this build does not know", i, e.Kind)
		}
	}
	return p, nil
}

// Without returns a copy of p without entry i: one step of delta debugging.
func Without(p Plan, i int) Plan {
	if i < 0 || i >= len(p.Entries) {
		panic(fmt.Sprintf("faults: Without(%d) of a plan with %d entries", i, len(p.Entries)))
	}
	q := p
	q.Entries = make([]PlanEntry, 0, len(p.Entries)-1)
	q.Entries = append(q.Entries, p.Entries[:i]...)
	q.Entries = append(q.Entries, p.Entries[i+1:]...)
	return q
}

// Subset returns a copy of p keeping only the entries at the given indices, in
// the plan's order (duplicates and order of keep do not matter).
func Subset(p Plan, keep []int) Plan {
	want := make([]bool, len(p.Entries))
	for _, i := range keep {
		if i < 0 || i >= len(p.Entries) {
			panic(fmt.Sprintf("faults: Subset index %d of a plan with %d entries", i, len(p.Entries)))
		}
		want[i] = true
	}
	q := p
	q.Entries = nil
	for i, e := range p.Entries {
		if want[i] {
			q.Entries = append(q.Entries, e)
		}
	}
	return q
}

// Chunks splits the indices of p into n contiguous parts of near-equal size
// (fewer when p has fewer entries): the partitions ddmin tries to remove.
func Chunks(p Plan, n int) [][]int {
	total := len(p.Entries)
	if n > total {
		n = total
	}
	var out [][]int
	start := 0
	for c := range n {
		end := start + (total-start)/(n-c)
		part := make([]int, 0, end-start)
		for i := start; i < end; i++ {
			part = append(part, i)
		}
		out = append(out, part)
		start = end
	}
	return out
}
