package reports

import (
	"fmt"
	"sort"

	"github.com/dispatchsim/dispatchsim/history"
)

// drawLane lays out one job's lane at y, laneH tall; big is a zoomed chart.
func drawLane(id string, e *laneEvents, h *history.History, fx *faultIndex, roles stateRoles, y, laneH float64, ax axis, big bool) (laneView, int) {
	scale := 1.0
	if big {
		scale = 1.35
	}
	body := laneH // the part of the lane the marks sit in
	if big {
		body -= focusNotes
	}
	lv := laneView{Job: id, Label: shorten(id, 15), Y: y, H: laneH, Mid: y + body/2, R: 4.2 * scale,
		Violating: len(e.hits) > 0}
	lv.SegH = 10 * scale
	lv.SegY = lv.Mid - lv.SegH/2
	lv.LabelY = lv.SegY + lv.SegH + 10
	for i, s := range e.states {
		end := ax.hi
		if i+1 < len(e.states) {
			end = e.states[i+1].Step
		}
		role := roles.of(s.To)
		seg := stateSeg{X: ax.x(s.Step), W: max(ax.x(end)-ax.x(s.Step), 1.5), Class: role.Class,
			Title: fmt.Sprintf("%s (%s) from step %d (t=%s), committed by %s", s.To, roles.title(s.To), s.Step, fmtDur(s.Time), s.Actor)}
		// A zoomed lane names each state under its bar where the name fits.
		if big && seg.W >= segLabelWidth(s.To)+6 {
			seg.Label, seg.LabelX = s.To, seg.X+2
		}
		lv.Segs = append(lv.Segs, seg)
	}
	var marks []mark
	for _, s := range e.states {
		marks = append(marks, mark{Shape: "tick", X: ax.x(s.Step), Y1: lv.SegY - 1, Y2: lv.SegY + lv.SegH + 1,
			Title: fmt.Sprintf("step %d t=%s: %s → %s (%s)", s.Step, fmtDur(s.Time), history.StateOrNone(s.From), s.To, s.Actor)})
	}
	for _, p := range e.pubs {
		marks = append(marks, mark{Shape: "pub", X: ax.x(p.Step), Y1: lv.Mid, Class: "pub-" + pubClass(p),
			Title: fmt.Sprintf("step %d t=%s: publish %s → %s (%s)", p.Step, fmtDur(p.Time), p.Subject, p.Outcome, p.Actor)})
	}
	for _, ex := range e.execs {
		cx := ax.x(ex.Step)
		marks = append(marks, mark{Shape: "exec", X: cx, Points: diamond(cx, lv.Mid, 5*scale),
			Title: fmt.Sprintf("step %d t=%s: executed by worker %s (dispatch %d, id %s)", ex.Step, fmtDur(ex.Time), ex.Worker, ex.Gen, ex.DispatchID)})
	}
	for _, i := range e.faults {
		f := h.Faults[i]
		cx := ax.x(f.Step)
		marks = append(marks, mark{Shape: "fault", X: cx, Points: triangle(cx, lv.SegY-7*scale, 5*scale),
			Title: fmt.Sprintf("step %d t=%s: fault %s (%s) at %s %s, by %s", f.Step, fmtDur(f.Time), f.Kind, f.Effect, f.Point, fx.target(i), f.Actor)})
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].X < marks[j].X })
	dropped := 0
	if len(marks) > maxLaneMarks {
		dropped = len(marks) - maxLaneMarks
		marks = marks[:maxLaneMarks]
	}
	for _, s := range e.hits {
		if s > 0 {
			marks = append(marks, mark{Shape: "hit", X: ax.x(s), Y1: y + 1, Y2: y + body - 1, Title: fmt.Sprintf("violation at step %d", s)})
		}
	}
	lv.Marks = marks
	if big {
		lv.Notes = laneNotes(e, ax, y+body)
	}
	return lv, dropped
}

// segLabelWidth is the width of a state's name inside a bar, in user units
// (9.5px text).
func segLabelWidth(state string) float64 { return 6.0 * float64(len([]rune(state))) }

// laneNotes labels a zoomed lane's dispatches, executions and violations in
// three rows under it, skipping a label that would overlap in every row.
func laneNotes(e *laneEvents, ax axis, top float64) []note {
	type cand struct {
		step        uint64
		text, class string
	}
	var cs []cand
	for _, p := range e.pubs {
		if !p.Dispatch {
			continue
		}
		switch p.Outcome {
		case history.PublishStored:
			cs = append(cs, cand{p.Step, "dispatch", ""})
		case history.PublishFailedStored:
			cs = append(cs, cand{p.Step, "dispatch: stored, error", "warn"})
		case history.PublishFailedClean:
			cs = append(cs, cand{p.Step, "dispatch failed", ""})
		}
	}
	for _, x := range e.execs {
		cs = append(cs, cand{x.Step, "runs on " + x.Worker, ""})
	}
	// One label per violating step, however many checkers fired there.
	perStep := map[uint64]int{}
	for _, s := range e.hits {
		if s > 0 {
			if perStep[s]++; perStep[s] == 1 {
				cs = append(cs, cand{s, fmt.Sprintf("✕ step %d", s), "bad"})
			}
		}
	}
	for i, c := range cs {
		if n := perStep[c.step]; c.class == "bad" && n > 1 {
			cs[i].text = fmt.Sprintf("✕ step %d (%d)", c.step, n)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].step < cs[j].step })
	var out []note
	rowEnd := [3]float64{-1e9, -1e9, -1e9}
	for _, c := range cs {
		x := ax.x(c.step)
		w := 5.8 * float64(len([]rune(c.text)))
		for r := range rowEnd {
			if x-w/2 > rowEnd[r]+6 {
				rowEnd[r] = x + w/2
				out = append(out, note{X: x, Y: top + 11 + 13*float64(r), Text: c.text, Class: c.class})
				break
			}
		}
	}
	return out
}
