package reports

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
)

// maxReportBytes caps a seed report; porcupine's views go first when over.
const maxReportBytes = 3 << 20

// maxViolations caps the violations told in words (the summary has them all).
const maxViolations = 50

// maxPlanRows caps the fault plan table (a swarm seed may fire hundreds).
const maxPlanRows = 400

// Meta is what the caller knows about a failing seed beyond its outcome.
type Meta struct {
	EngineVersion string
	// Options are the run's derived options (what the seed drew), in order.
	Options []Option
	// Replay reproduces the seed; Shrink shrinks its fault plan; Explain
	// runs simrun likelihood on it ("" none, as for a branch). An empty
	// Replay is the scenario's replay line.
	Replay, Shrink, Explain string
	// Plan is the fault plan to show, typically the shrunk minimal one; nil
	// shows the plan the run recorded.
	Plan *history.Plan
	// Note is shown under the title: why this report was written, say.
	Note string
	// Live marks a live run's seed: nothing reproduces it, so the report
	// offers no replay, shrink or likelihood line.
	Live bool
	// Likelihood, if set, adds the panel of when the failure became
	// certain (simrun likelihood).
	Likelihood *Likelihood
}

// Option is one name/value pair of a run's configuration.
type Option struct{ Name, Value string }

// SeedReport is the HTML report of one failing seed.
type SeedReport struct {
	view seedView
}

// seedView is everything the template shows. Its fields are plain strings and
// numbers: html/template escapes each where it lands.
type seedView struct {
	System                      string // "" when the caller did not say
	Scenario, Verdict, Checksum string
	Seed, Steps                 uint64
	EngineVersion, Note         string
	Options                     []Option
	Facts                       []Option
	Fired, Branches             []Option
	Violations                  []violationView
	ViolationsCut               int
	Plan                        planView
	Timeline                    timelineView
	Lin                         linSection
	Trace                       traceView
	Replay, Shrink, Explain     string
	Likelihood                  *likelihoodView
	Live                        bool
}

// planView is the fault plan as a table.
type planView struct {
	Minimal bool
	Total   int
	Rows    []planRow
	Cut     int
}

type planRow struct {
	N                                      int
	Kind, Effect, Where, Target, When, Dur string
	Hot                                    bool // a violation names this fault
}

// NewSeedReport prepares the report of one run. expect is the checker the
// scenario expects to fire ("" for none).
func NewSeedReport(o Run, expect string, meta Meta) *SeedReport {
	h := &history.History{}
	if o.History != nil {
		h = o.History
	}
	fx := newFaultIndex(h, o.Plan)
	v := seedView{System: o.System, Scenario: o.Scenario, Seed: o.Seed, Steps: o.Steps, Checksum: fmt.Sprintf("%016x", o.Checksum),
		Verdict: seedVerdict(o.Result, expect), EngineVersion: meta.EngineVersion, Options: meta.Options, Note: meta.Note,
		Replay: meta.Replay, Shrink: meta.Shrink, Likelihood: buildLikelihood(meta.Likelihood)}
	if meta.Likelihood == nil {
		v.Explain = meta.Explain // with the panel there, the line would only run it again
	}
	if v.Replay == "" && !meta.Live {
		v.Replay = o.Replay
	}
	if meta.Live {
		v.Live, v.Replay, v.Shrink, v.Explain = true, "", "", ""
	}
	if v.EngineVersion == "" {
		v.EngineVersion = "unknown"
	}
	v.Facts = []Option{
		{"linearizability", string(o.Result.Linearizability)},
		{"virtual time", fmtDur(h.End)},
		{"fault phase", fmtDur(h.FaultPhaseEnd)},
		{"jobs", fmt.Sprint(len(h.Submitted))},
		{"publishes", fmt.Sprint(len(h.Publishes))},
		{"executions", fmt.Sprint(len(h.Executions))},
		{"faults fired", fmt.Sprint(len(h.Faults))},
		{"store commands", fmt.Sprint(h.Redis.Commands)},
		{"wall", o.Wall.Round(time.Millisecond).String()},
	}
	if meta.Live {
		v.Facts[1].Name = "elapsed time" // the wall clock's, not a virtual one
	}
	if d := o.Result.Figures.ClockExcuse; d > 0 {
		v.Facts = append(v.Facts, Option{"clock excuse", fmt.Sprintf(
			"timing checks forgave %s of replica clock spread: the system measures on its replicas' clocks", d)})
	}
	v.Fired = countRows(o.Fired)
	v.Branches = countRows(o.Branches)
	v.Violations = violationViews(o.Result, h, fx)
	if len(v.Violations) > maxViolations {
		v.ViolationsCut = len(v.Violations) - maxViolations
		v.Violations = v.Violations[:maxViolations]
	}

	plan, minimal := o.Plan, false
	if meta.Plan != nil {
		plan, minimal = *meta.Plan, true
	}
	v.Plan = planTable(plan, minimal, v.Violations)
	v.Timeline = buildTimeline(o.Result, h, fx, stateRoles{o.Spec})
	v.Lin = buildLin(o.Result, h, fx)

	// The trace opens at the first finding that has a step (findings in
	// reading order: a whole-run counter mismatch has none).
	trace := o.Trace
	var step uint64
	hits := map[uint64]bool{}
	for _, vi := range readingOrder(o.Result.Violations) {
		if vi.Step > 0 {
			if step == 0 {
				step = vi.Step
			}
			hits[vi.Step] = true
		}
	}
	// No finding names a step (counter mismatches only): what they count
	// began with the faults, so the trace opens at the first one.
	atFault := false
	if step == 0 && len(h.Faults) > 0 && h.Faults[0].Step > 0 {
		step, atFault = h.Faults[0].Step, true
	}
	v.Trace = buildTrace(trace, step, hits)
	v.Trace.AtFault = atFault
	linkViolations(&v, trace, h, fx, hits)
	return &SeedReport{view: v}
}

// linkViolations gives each violation card its trace excerpt and its job's
// swimlane. A counter mismatch over the whole run has neither: no line of
// the trace is its.
func linkViolations(v *seedView, trace []byte, h *history.History, fx *faultIndex, hits map[uint64]bool) {
	var wants []excerptWant
	var of []int // the card each want is for
	for i, vv := range v.Violations {
		if vv.Accounting {
			continue
		}
		w := excerptWant{Job: vv.Job, Checker: vv.Checker, Step: vv.Step}
		for _, fi := range fx.of(vv.Job) {
			w.FaultSteps = append(w.FaultSteps, h.Faults[fi].Step)
		}
		wants = append(wants, w)
		of = append(of, i)
	}
	var ids []string
	v.Trace.Excerpts, ids, v.Trace.ExcerptsCut = buildExcerpts(trace, wants, hits)
	for k, i := range of {
		v.Violations[i].TraceID = ids[k]
	}
	for i := range v.Violations {
		v.Violations[i].LaneID = v.Timeline.Anchors[v.Violations[i].Job]
	}
}

// WriteHTML writes the report: one self-contained page. When the page would
// pass the size cap, porcupine's embedded views are dropped (the rest is
// bounded by construction) and the report says so.
func (r *SeedReport) WriteHTML(w io.Writer) error {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "seed.html.tmpl", r.view); err != nil {
		return fmt.Errorf("render seed report: %w", err)
	}
	if buf.Len() > maxReportBytes {
		v := r.view
		v.Lin.Views = nil
		v.Lin.Cut = append(v.Lin.Cut[:len(v.Lin.Cut):len(v.Lin.Cut)],
			fmt.Sprintf("porcupine's views are left out: with them the report was %d KiB, over the %d MiB cap",
				buf.Len()>>10, maxReportBytes>>20))
		buf.Reset()
		if err := pages.ExecuteTemplate(&buf, "seed.html.tmpl", v); err != nil {
			return fmt.Errorf("render seed report: %w", err)
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func planTable(p history.Plan, minimal bool, vs []violationView) planView {
	hot := map[uint64]bool{}
	for _, v := range vs {
		for _, f := range v.Faults {
			if f.Touches {
				hot[f.Step] = true
			}
		}
	}
	pv := planView{Minimal: minimal, Total: len(p.Entries)}
	for i, e := range p.Entries {
		if i == maxPlanRows {
			pv.Cut = len(p.Entries) - maxPlanRows
			break
		}
		row := planRow{N: i + 1, Kind: e.Kind, Effect: string(e.Effect), Target: e.Target}
		d := time.Duration(e.DurationMs) * time.Millisecond
		switch {
		case !e.Setup:
			row.Where = fmt.Sprintf("%s · %s #%d", e.Point, e.Group, e.Occurrence)
			row.When = fmt.Sprintf("step %d", e.Step)
			row.Hot = hot[e.Step]
			if d > 0 {
				row.Dur = d.String()
			}
		case e.SkewMs != 0:
			row.Where = "clock of " + e.Group
			row.When = "setup"
			row.Dur = "skew " + (time.Duration(e.SkewMs) * time.Millisecond).String()
		case e.Point != "":
			group := e.Group
			if group == "" {
				group = "every group"
			}
			row.Where = fmt.Sprintf("every %s point of %s", e.Point, group)
			start := time.Duration(e.StartMs) * time.Millisecond
			row.When = fmt.Sprintf("window %s–%s", start, start+d)
			row.Dur = d.String()
		default:
			row.Where = "pool mapping"
			row.When = "setup"
			row.Dur = "permanent"
			if d > 0 {
				row.Dur = d.String()
			}
		}
		pv.Rows = append(pv.Rows, row)
	}
	return pv
}

// countRows lists a count map sorted by name.
func countRows(m map[string]int) []Option {
	out := make([]Option, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Option{k, fmt.Sprint(m[k])})
	}
	return out
}
