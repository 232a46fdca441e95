package history

import (
	"encoding/json"
	"fmt"
	"time"
)

// PlanVersion is the format version of encoded plans. Bump it whenever the
// meaning of an entry changes (a field, a target's spelling, a kind's effect):
// a plan from another version would replay different faults silently.
const PlanVersion = 1

// Plan is every fault a run fired, in the order it fired, setup-time faults
// first. Replaying it forces the same faults; removing entries is what
// shrinking works on.
type Plan struct {
	Version int    `json:"version"`
	Seed    uint64 `json:"seed"`
	// Branch is the branch key ("K/B") the plan was recorded on: its point
	// faults after step K came from the branch's streams. "" is the seed.
	Branch  string      `json:"branch,omitempty"`
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
	Kind   string `json:"kind"`
	Effect Effect `json:"effect,omitempty"`
	// Also are further effects at the same point (a result both late and
	// retryable), applied in order after Effect.
	Also       []Effect  `json:"also,omitempty"`
	DurationMs int64     `json:"duration_ms,omitempty"`
	Point      PointKind `json:"point,omitempty"`
	Group      string    `json:"group,omitempty"`
	Target     string    `json:"target,omitempty"`
	Occurrence int       `json:"occurrence"`
	Step       uint64    `json:"step,omitempty"`
	Setup      bool      `json:"setup,omitempty"`
	StartMs    int64     `json:"start_ms,omitempty"`
	SkewMs     int64     `json:"skew_ms,omitempty"`
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
	case e.StartMs > 0 && e.Group != "":
		// A replica stopped and started again (a deploy).
		return fmt.Sprintf("%s: %s stopped at %s, started again %s later", e.Kind, e.Group,
			time.Duration(e.StartMs)*time.Millisecond, d)
	case e.StartMs > 0:
		// A server losing or forgetting what came in over a span.
		return fmt.Sprintf("%s: at %s, for what came in over the %s before", e.Kind,
			time.Duration(e.StartMs)*time.Millisecond, d)
	case e.DurationMs > 0:
		return fmt.Sprintf("%s: topic %q has no pool mapping for the first %s", e.Kind, e.Target, d)
	default:
		return fmt.Sprintf("%s: topic %q has no pool mapping", e.Kind, e.Target)
	}
}

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
// other (faults.DecodePlan also refuses kinds this build does not know).
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
	*p = Plan(q)
	return nil
}

// Encode is the plan as indented JSON.
func (p Plan) Encode() ([]byte, error) { return json.MarshalIndent(p, "", "  ") }
