package reports

import (
	"fmt"
	"math"
	"time"
)

// Likelihood answers "when did the failure become inevitable?" for one
// failing seed: at moments along its run, branches continue it with fresh
// randomness, and the share of them that still fail with the seed's checker
// is plotted against the step (simrun likelihood). It is likelihood.json as
// written, and the seed report's panel.
type Likelihood struct {
	System   string `json:"system,omitempty"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Strategy string `json:"strategy,omitempty"`
	// Checker is the seed's failure bucket: a branch fails when it fires.
	Checker string `json:"checker"`
	// ViolationStep is the step of the seed's own first finding of Checker
	// (0: the finding has no step, as a counter mismatch over the run).
	ViolationStep uint64             `json:"violation_step,omitempty"`
	Steps         uint64             `json:"steps"`    // the seed's run length
	Branches      int                `json:"branches"` // planned per moment
	Moments       []LikelihoodMoment `json:"moments"`
	// Certain is whether some moment's branches, and every later moment's,
	// all failed; CertainStep is the earliest such moment.
	Certain     bool   `json:"certain"`
	CertainStep uint64 `json:"certain_step,omitempty"`
	// FaultBefore and EventBefore are the seed's last fault, and last fault
	// or state transition, at or before CertainStep.
	FaultBefore *LikelihoodEvent `json:"fault_before,omitempty"`
	EventBefore *LikelihoodEvent `json:"event_before,omitempty"`
	// Job is the job of the seed's first finding of Checker ("" none);
	// JobFaultBefore and JobEventBefore are the last fault, and last fault,
	// transition or client cancel, on it at or before CertainStep.
	Job            string           `json:"job,omitempty"`
	JobFaultBefore *LikelihoodEvent `json:"job_fault_before,omitempty"`
	JobEventBefore *LikelihoodEvent `json:"job_event_before,omitempty"`
	// Faults are the seed's faults, for the time axis.
	Faults []LikelihoodEvent `json:"faults"`
	// Overrepresented ranks the events the branches drew themselves (after
	// their step) by how much more often failing branches had them than
	// passing ones, over the moments whose branches went both ways.
	Overrepresented []EventOdds `json:"overrepresented"`
	// Compared counts the failing and passing branches Overrepresented
	// compares.
	ComparedFailing int `json:"compared_failing"`
	ComparedPassing int `json:"compared_passing"`
	// NotRun counts planned branches without a result (an error, an
	// interrupt): a moment missing any is never certain.
	NotRun      int     `json:"not_run"`
	Stopped     string  `json:"stopped,omitempty"`
	WallSeconds float64 `json:"wall_seconds"`
}

// LikelihoodMoment is one step the seed was branched from.
type LikelihoodMoment struct {
	Step    uint64        `json:"step"`
	Time    time.Duration `json:"time_ns"` // virtual time at the step, as near as the history says
	Runs    int           `json:"runs"`
	Failing int           `json:"failing"`
	// Errors are branches that ran into a harness error: not counted in Runs.
	Errors int `json:"errors,omitempty"`
	// Refined marks a moment added around a fault near the certain step.
	Refined bool `json:"refined,omitempty"`
	// FailReplay and PassReplay reproduce one failing and one passing branch.
	FailReplay string `json:"fail_replay,omitempty"`
	PassReplay string `json:"pass_replay,omitempty"`
}

// Share is the fraction of the moment's branches that failed.
func (m LikelihoodMoment) Share() float64 {
	if m.Runs == 0 {
		return 0
	}
	return float64(m.Failing) / float64(m.Runs)
}

// LikelihoodEvent is a fault or state transition of the seed, by its key.
type LikelihoodEvent struct {
	Step uint64        `json:"step"`
	Time time.Duration `json:"time_ns"`
	Key  string        `json:"key"`
	Job  string        `json:"job,omitempty"` // the job it touched
}

// EventOdds is how often failing and passing branches had an event.
type EventOdds struct {
	Key     string  `json:"key"`
	Failing int     `json:"failing"`
	Passing int     `json:"passing"`
	Ratio   float64 `json:"ratio"` // failing share over passing share, smoothed
}

// Geometry of the likelihood chart, in SVG user units.
const (
	likeWidth    = 960.0
	likeLeft     = 56.0
	likeRight    = 24.0
	likeTop      = 26.0
	likePlot     = 220.0 // the height of the share plot
	likeStrip    = 34.0  // the faults' strip under it
	likeAxis     = 30.0
	likeMaxMarks = 300 // fault marks drawn; the rest are counted
)

// likelihoodView is the panel as the template draws it.
type likelihoodView struct {
	L             *Likelihood
	Width, Height float64
	PlotTop       float64
	PlotBottom    float64
	PlotLeft      float64
	PlotRight     float64
	StripY        float64
	Grid          []likeTick
	XTicks        []likeTick
	Line          string // the curve's polyline points
	Points        []likePoint
	Marks         []likeMark
	MarksCut      int
	CertainX      float64
	CertainW      float64
	ViolationX    float64
	HasViolation  bool
	Headline      string
	Start         string // the share from the first moment, in words
	FromStart     bool   // certain from the first moment on
	// JobFault is the last fault on the violation's job before the certain
	// step, when it is not the last fault of all; JobEvent its last event,
	// when that is not JobFault; Event the last event of all, when it is
	// none of these.
	JobFault, JobEvent, Event *LikelihoodEvent
	Rows                      []likeRow
	Odds                      []likeOdds
}

type likeTick struct {
	X, Y  float64
	Label string
}

type likePoint struct {
	X, Y  float64
	Title string
	Class string
}

type likeMark struct {
	X     float64
	Title string
	Class string
}

type likeRow struct {
	LikelihoodMoment
	Pct     float64
	Class   string
	TimeStr string
}

type likeOdds struct {
	EventOdds
	FailPct, PassPct float64
	RatioStr         string
}

// buildLikelihood lays the panel out.
func buildLikelihood(l *Likelihood) *likelihoodView {
	if l == nil {
		return nil
	}
	v := &likelihoodView{L: l, Width: likeWidth, PlotTop: likeTop, PlotBottom: likeTop + likePlot,
		PlotLeft: likeLeft, PlotRight: likeWidth - likeRight}
	v.StripY = v.PlotBottom + likeStrip/2
	v.Height = v.PlotBottom + likeStrip + likeAxis
	var xmax uint64
	for _, m := range l.Moments {
		xmax = max(xmax, m.Step)
	}
	xmax = max(xmax, l.ViolationStep, 1)
	x := func(step uint64) float64 {
		return v.PlotLeft + (v.PlotRight-v.PlotLeft)*float64(min(step, xmax))/float64(xmax)
	}
	y := func(share float64) float64 { return v.PlotBottom - likePlot*share }
	for _, s := range []float64{0, 0.25, 0.5, 0.75, 1} {
		v.Grid = append(v.Grid, likeTick{X: v.PlotLeft, Y: y(s), Label: fmt.Sprintf("%.0f%%", 100*s)})
	}
	for _, t := range niceTicks(float64(xmax), 6) {
		v.XTicks = append(v.XTicks, likeTick{X: x(uint64(t)), Y: v.Height - 10, Label: fmt.Sprintf("%.0f", t)})
	}
	for i, m := range l.Moments {
		px, py := x(m.Step), y(m.Share())
		if i > 0 {
			v.Line += " "
		}
		v.Line += fmt.Sprintf("%.1f,%.1f", px, py)
		class := "pt"
		switch {
		case m.Runs < l.Branches:
			class += " partial"
		case l.Certain && m.Step >= l.CertainStep:
			class += " sure"
		}
		if m.Refined {
			class += " refined"
		}
		v.Points = append(v.Points, likePoint{X: px, Y: py, Class: class, Title: fmt.Sprintf(
			"step %d (%s): %d of %d branches fail %s", m.Step, fmtDur(m.Time), m.Failing, m.Runs, l.Checker)})
		row := likeRow{LikelihoodMoment: m, Pct: 100 * m.Share(), TimeStr: fmtDur(m.Time)}
		if l.Certain && m.Step >= l.CertainStep {
			row.Class = "sure"
		}
		v.Rows = append(v.Rows, row)
	}
	for _, f := range l.Faults {
		if f.Step > xmax {
			continue
		}
		if len(v.Marks) == likeMaxMarks {
			v.MarksCut++
			continue
		}
		class := "fmark"
		switch {
		case l.FaultBefore != nil && f == *l.FaultBefore:
			class += " key"
		case l.JobFaultBefore != nil && f == *l.JobFaultBefore:
			class += " jobkey"
		case l.Job != "" && f.Job == l.Job:
			class += " job"
		}
		v.Marks = append(v.Marks, likeMark{X: x(f.Step), Class: class,
			Title: fmt.Sprintf("step %d (%s): %s%s", f.Step, fmtDur(f.Time), f.Key, onJob(f.Job))})
	}
	if l.ViolationStep > 0 {
		v.HasViolation, v.ViolationX = true, x(l.ViolationStep)
	}
	if l.Certain {
		v.CertainX = x(l.CertainStep)
		v.CertainW = v.PlotRight - v.CertainX
	}
	if len(l.Moments) > 0 {
		m := l.Moments[0]
		v.Start = fmt.Sprintf("Branched from step %d, %d of %d runs fail %s (%.0f%%).", m.Step, m.Failing, m.Runs,
			l.Checker, 100*m.Share())
	}
	if f := l.JobFaultBefore; f != nil && (l.FaultBefore == nil || *f != *l.FaultBefore) {
		v.JobFault = f
	}
	if e := l.JobEventBefore; e != nil && (l.JobFaultBefore == nil || *e != *l.JobFaultBefore) {
		v.JobEvent = e
	}
	if e := l.EventBefore; e != nil && (l.FaultBefore == nil || *e != *l.FaultBefore) &&
		(l.JobEventBefore == nil || *e != *l.JobEventBefore) {
		v.Event = e
	}
	v.FromStart = l.Certain && len(l.Moments) > 0 && l.CertainStep == l.Moments[0].Step
	switch {
	case v.FromStart:
		v.Headline = fmt.Sprintf("Certain from the start: every branch from step %d on fails %s.", l.CertainStep, l.Checker)
	case l.Certain:
		v.Headline = fmt.Sprintf("Certain from step %d: every branch from there on fails %s.", l.CertainStep, l.Checker)
	case l.NotRun > 0:
		v.Headline = fmt.Sprintf("No moment is certain among those that ran (%d branches did not run).", l.NotRun)
	default:
		v.Headline = fmt.Sprintf("Never certain: at every moment some branch avoids %s.", l.Checker)
	}
	for _, o := range l.Overrepresented {
		lo := likeOdds{EventOdds: o, RatioStr: fmt.Sprintf("%.1f×", o.Ratio)}
		if l.ComparedFailing > 0 {
			lo.FailPct = 100 * float64(o.Failing) / float64(l.ComparedFailing)
		}
		if l.ComparedPassing > 0 {
			lo.PassPct = 100 * float64(o.Passing) / float64(l.ComparedPassing)
		}
		v.Odds = append(v.Odds, lo)
	}
	return v
}

// onJob names the job an event touched, for a tooltip.
func onJob(job string) string {
	if job == "" {
		return ""
	}
	return " on " + job
}

// niceTicks are about n round values from 0 to hi.
func niceTicks(hi float64, n int) []float64 {
	if hi <= 0 {
		return []float64{0}
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for t := 0.0; t <= hi+step/1e9; t += step {
		out = append(out, t)
	}
	return out
}
