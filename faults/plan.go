package faults

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

// PlanVersion is the format version of encoded plans. Bump it whenever the
// meaning of an entry changes (a field, a target's spelling, a kind's effect):
// a plan from another version would replay different faults silently.
const PlanVersion = 1

// Plan is every fault a run fired, in the order it fired, setup-time faults
// first. Replaying it forces the same faults; removing entries is what
// shrinking works on.
type Plan struct {
	Version int         `json:"version"`
	Seed    uint64      `json:"seed"`
	Entries []PlanEntry `json:"entries"`
}

// PlanEntry is one fault of a plan.
//
// A point fault (Setup false) is identified by (Point, Group, Target,
// Occurrence): Occurrence counts the earlier points of the run with the same
// point kind, group and target, fault or not. That identity survives other
// faults being removed, as far as the run itself does; Step is informational.
//
// A setup-time fault (Setup true) is a window (StartMs for DurationMs, in which
// every eligible Point of Group, or of every group when Group is empty, gets
// Effect), a missing pool mapping (Target is the topic; restored after
// DurationMs, never when DurationMs is 0), or a clock skew (Group is the
// replica, SkewMs the skew).
type PlanEntry struct {
	Kind       string        `json:"kind"`
	Effect     sim.Effect    `json:"effect,omitempty"`
	DurationMs int64         `json:"duration_ms,omitempty"`
	Point      sim.PointKind `json:"point,omitempty"`
	Group      string        `json:"group,omitempty"`
	Target     string        `json:"target,omitempty"`
	Occurrence int           `json:"occurrence"`
	Step       uint64        `json:"step,omitempty"`
	Setup      bool          `json:"setup,omitempty"`
	StartMs    int64         `json:"start_ms,omitempty"`
	SkewMs     int64         `json:"skew_ms,omitempty"`
}

// Fault is the simulator's fault this entry forces at its point.
func (e PlanEntry) Fault() sim.Fault {
	return sim.Fault{Kind: e.Kind, Effect: e.Effect, Duration: time.Duration(e.DurationMs) * time.Millisecond}
}

func (e PlanEntry) String() string {
	d := time.Duration(e.DurationMs) * time.Millisecond
	switch {
	case !e.Setup:
		s := fmt.Sprintf("%s: %s at %s %s %q #%d (step %d)", e.Kind, e.Effect, e.Point, e.Group, e.Target, e.Occurrence, e.Step)
		if e.DurationMs > 0 {
			s += fmt.Sprintf(" for %s", d)
		}
		return s
	case e.SkewMs != 0:
		return fmt.Sprintf("%s: %s clock skewed by %s", e.Kind, e.Group, time.Duration(e.SkewMs)*time.Millisecond)
	case e.Point != "":
		start := time.Duration(e.StartMs) * time.Millisecond
		group := e.Group
		if group == "" {
			group = "every group"
		}
		return fmt.Sprintf("%s: %s at every eligible %s point of %s from %s to %s", e.Kind, e.Effect, e.Point, group, start, start+d)
	case e.DurationMs > 0:
		return fmt.Sprintf("%s: topic %q has no pool mapping for the first %s", e.Kind, e.Target, d)
	default:
		return fmt.Sprintf("%s: topic %q has no pool mapping", e.Kind, e.Target)
	}
}

// pointKey is a point fault's identity.
type pointKey struct {
	point         sim.PointKind
	group, target string
	occurrence    int
}

func (e PlanEntry) key() pointKey { return pointKey{e.Point, e.Group, e.Target, e.Occurrence} }

// MarshalJSON writes the current format version when the plan has none.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	if p.Version == 0 {
		p.Version = PlanVersion
	}
	if p.Entries == nil {
		p.Entries = []PlanEntry{}
	}
	return json.Marshal(plain(p))
}

// UnmarshalJSON reads a plan of this build's format version and refuses any
// other, and any kind this build does not know.
func (p *Plan) UnmarshalJSON(b []byte) error {
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("decode fault plan: %w", err)
	}
	switch {
	case probe.Version == nil:
		return fmt.Errorf("decode fault plan: no format version (this build reads version %d)", PlanVersion)
	case *probe.Version != PlanVersion:
		return fmt.Errorf("decode fault plan: format version %d, this build reads version %d: record the plan again from its seed",
			*probe.Version, PlanVersion)
	}
	type plain Plan
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("decode fault plan: %w", err)
	}
	for i, e := range q.Entries {
		if _, ok := Lookup(e.Kind); !ok {
			return fmt.Errorf("decode fault plan: entry %d names fault kind %q, which this build does not know", i, e.Kind)
		}
	}
	*p = Plan(q)
	return nil
}

// Encode is the plan as indented JSON.
func (p Plan) Encode() ([]byte, error) { return json.MarshalIndent(p, "", "  ") }

// DecodePlan reads a plan written by Encode (or json.Marshal).
func DecodePlan(b []byte) (Plan, error) {
	var p Plan
	err := json.Unmarshal(b, &p)
	return p, err
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
