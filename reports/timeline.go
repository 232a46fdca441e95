package reports

import (
	"fmt"
	"sort"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
)

// Timeline limits: the report must stay small whatever the run did.
const (
	maxOtherLanes = 40  // overview lanes for jobs not named by a violation
	maxFocus      = 6   // zoomed charts, one per job a violation names
	maxLaneMarks  = 250 // marks per lane, beyond the state bars
	maxAllMarks   = 8000
	focusNotes    = 42 // room for three rows of labels under a zoomed lane
)

// Geometry of the swimlane SVGs, in user units (they scale to the page).
const (
	tlWidth  = 1200.0
	tlLabel  = 118.0 // the job-id column
	tlRight  = 14.0
	tlAxis   = 30.0
	tlBottom = 8.0
)

// timelineView is the per-job swimlanes: a zoomed chart per violating job,
// then an overview of every job on one axis.
type timelineView struct {
	Focus    []chart
	Overview chart
	Jobs     int      // jobs in the run
	Cut      []string // what was left out, in words
	// Anchors are the element ids of each violating job's zoomed chart, or
	// of its lane in the overview when it has no zoomed chart.
	Anchors map[string]string
	// Legend is the roles of the system's states, each with its colour and
	// the states' own names.
	Legend []legendRow
}

// chart is one SVG: an axis and lanes.
type chart struct {
	ID            string
	Width, Height float64
	Ticks         []axisTick
	Hits          []axisTick // violation steps, marked on the axis
	Lanes         []laneView
}

type axisTick struct {
	X                   float64
	Label, Time, Anchor string
}

// laneView is one job's lane, with its geometry precomputed.
type laneView struct {
	ID         string
	Job, Label string
	Y, Mid, H  float64
	SegY, SegH float64
	LabelY     float64 // baseline of the state names under the bars
	R          float64 // publish mark radius
	Violating  bool
	Segs       []stateSeg
	Marks      []mark
	Notes      []note // labels under a zoomed lane
}

// note is a short label under a zoomed lane.
type note struct {
	X, Y        float64
	Text, Class string
}

// stateSeg is the job's stored state between two commits. Label is the
// state's name, drawn under the bar of a zoomed lane where it fits ("" when
// not).
type stateSeg struct {
	X, W         float64
	Class, Title string
	Label        string
	LabelX       float64
}

// mark is one event on a lane; Shape picks the glyph in the template.
type mark struct {
	Shape        string // tick | pub | exec | fault | hit
	X, Y1, Y2    float64
	Points       string // polygon points for exec and fault
	Class, Title string
}

// laneEvents gathers one job's events.
type laneEvents struct {
	states []history.StateChange
	pubs   []history.PublishRecord
	execs  []history.Execution
	faults []int // indices into History.Faults
	hits   []uint64
}

// span is the step range of the lane's events; faults only widen it when
// withFaults (a focus chart shows the fault that started it all).
func (e *laneEvents) span(h *history.History, withFaults bool) (lo, hi uint64, ok bool) {
	see := func(s uint64) {
		if !ok || s < lo {
			lo = s
		}
		if !ok || s > hi {
			hi = s
		}
		ok = true
	}
	for _, s := range e.states {
		see(s.Step)
	}
	for _, p := range e.pubs {
		see(p.Step)
	}
	for _, x := range e.execs {
		see(x.Step)
	}
	for _, s := range e.hits {
		if s > 0 {
			see(s)
		}
	}
	if withFaults {
		for _, i := range e.faults {
			see(h.Faults[i].Step)
		}
	}
	return lo, hi, ok
}

// axis maps steps onto a chart's plot area.
type axis struct{ lo, hi uint64 }

func newAxis(lo, hi uint64, padDiv uint64) axis {
	pad := (hi - lo) / padDiv
	if lo > pad {
		lo -= pad
	} else {
		lo = 0
	}
	return axis{lo, hi + pad + 1}
}

func (a axis) x(step uint64) float64 {
	step = min(max(step, a.lo), a.hi)
	return tlLabel + float64(step-a.lo)/float64(a.hi-a.lo)*(tlWidth-tlLabel-tlRight)
}

func (a axis) ticks(n int, clock stepClock) []axisTick {
	var out []axisTick
	for i := 0; i <= n; i++ {
		s := a.lo + (a.hi-a.lo)*uint64(i)/uint64(n)
		anchor := "middle"
		if i == n {
			anchor = "end" // keep the last label inside the chart
		}
		out = append(out, axisTick{X: a.x(s), Label: fmt.Sprintf("step %d", s), Time: fmtShort(clock.at(s)), Anchor: anchor})
	}
	return out
}

func buildTimeline(res *checker.Result, h *history.History, fx *faultIndex, roles stateRoles) timelineView {
	tv := timelineView{Anchors: map[string]string{}, Legend: roles.legend(h)}
	events := map[string]*laneEvents{}
	var jobs []string
	lane := func(id string) *laneEvents {
		e, ok := events[id]
		if !ok {
			e = &laneEvents{}
			events[id] = e
			jobs = append(jobs, id)
		}
		return e
	}
	for _, s := range h.Submitted {
		lane(s.JobID)
	}
	for _, s := range h.States {
		lane(s.JobID).states = append(lane(s.JobID).states, s)
	}
	for _, p := range h.Publishes {
		if p.JobID != "" {
			lane(p.JobID).pubs = append(lane(p.JobID).pubs, p)
		}
	}
	for _, x := range h.Executions {
		lane(x.JobID).execs = append(lane(x.JobID).execs, x)
	}
	tv.Jobs = len(jobs)

	// Violating jobs first, in the order a person reads the findings.
	var hot []string
	for _, v := range readingOrder(res.Violations) {
		if v.Job == "" {
			continue
		}
		if _, ok := events[v.Job]; !ok || len(events[v.Job].hits) == 0 {
			if !ok {
				lane(v.Job)
			}
			hot = append(hot, v.Job)
		}
		events[v.Job].hits = append(events[v.Job].hits, v.Step)
	}
	isHot := map[string]bool{}
	for _, id := range hot {
		isHot[id] = true
	}
	var others []string
	for _, id := range jobs {
		if !isHot[id] {
			others = append(others, id)
		}
	}
	sort.Slice(others, func(i, j int) bool { return naturalLess(others[i], others[j]) })
	if len(others) > maxOtherLanes {
		tv.Cut = append(tv.Cut, fmt.Sprintf("%d of %d jobs not named by a violation are not drawn", len(others)-maxOtherLanes, len(others)))
		others = others[:maxOtherLanes]
	}
	order := append(append([]string(nil), hot...), others...)

	for _, id := range order {
		events[id].faults = fx.of(id)
	}
	clock := newStepClock(h)
	budget := maxAllMarks

	// Zoomed charts: each violating job on its own axis.
	for n, id := range hot {
		if n == maxFocus {
			if more := len(hot) - maxFocus; more == 1 {
				tv.Cut = append(tv.Cut, "1 more violating job has no zoomed chart")
			} else {
				tv.Cut = append(tv.Cut, fmt.Sprintf("%d more violating jobs have no zoomed chart", more))
			}
			break
		}
		lo, hi, ok := events[id].span(h, true)
		if !ok {
			continue
		}
		ax := newAxis(lo, hi, 16)
		c := chart{ID: fmt.Sprintf("lane-%d", n+1), Width: tlWidth, Ticks: ax.ticks(5, clock)}
		tv.Anchors[id] = c.ID
		lv, dropped := drawLane(id, events[id], h, fx, roles, tlAxis, 44+focusNotes, ax, true)
		budget -= len(lv.Marks)
		if dropped > 0 {
			tv.Cut = append(tv.Cut, fmt.Sprintf("Job %s: %d late events beyond %d are not drawn", id, dropped, maxLaneMarks))
		}
		c.Lanes = []laneView{lv}
		c.Height = tlAxis + lv.H + tlBottom
		tv.Focus = append(tv.Focus, c)
	}

	// The overview: every shown job on one axis. The axis is the step:
	// virtual time jumps over idle minutes, steps do not.
	var lo, hi uint64
	found := false
	for _, id := range order {
		a, b, ok := events[id].span(h, false)
		if !ok {
			continue
		}
		if !found || a < lo {
			lo = a
		}
		if !found || b > hi {
			hi = b
		}
		found = true
	}
	ax := newAxis(lo, hi, 40)
	ov := chart{Width: tlWidth, Ticks: ax.ticks(6, clock)}
	seen := map[uint64]bool{}
	for _, v := range readingOrder(res.Violations) {
		if v.Step > 0 && !seen[v.Step] {
			seen[v.Step] = true
			ov.Hits = append(ov.Hits, axisTick{X: ax.x(v.Step), Label: fmt.Sprintf("%s at step %d", v.Checker, v.Step)})
		}
	}
	dropped := 0
	for n, id := range order {
		lv, d := drawLane(id, events[id], h, fx, roles, tlAxis+float64(n)*24, 24, ax, false)
		if len(lv.Marks) > budget {
			tv.Cut = append(tv.Cut, fmt.Sprintf("%d more lanes are not drawn (over %d marks)", len(order)-n, maxAllMarks))
			break
		}
		budget -= len(lv.Marks)
		dropped += d
		if isHot[id] {
			lv.ID = fmt.Sprintf("overview-%d", n+1)
			if _, zoomed := tv.Anchors[id]; !zoomed {
				tv.Anchors[id] = lv.ID
			}
		}
		ov.Lanes = append(ov.Lanes, lv)
	}
	if dropped > 0 {
		tv.Cut = append(tv.Cut, fmt.Sprintf("%d late events beyond %d per lane are not drawn", dropped, maxLaneMarks))
	}
	ov.Height = tlAxis + float64(len(ov.Lanes))*24 + tlBottom
	tv.Overview = ov
	return tv
}
