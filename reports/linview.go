package reports

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/anishathalye/porcupine"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/sim"
)

// Limits on porcupine's views, which embed their own page each.
const (
	maxLinViews    = 3
	maxContextView = 1 // linearizable partitions shown for context
	maxLinDocBytes = 700 << 10
	maxLinAllBytes = 1500 << 10 // all views together, before escaping (which adds about a third)
)

// linView is one partition's porcupine visualization.
type linView struct {
	Kind, Key, Outcome string
	Ops                int
	// Doc is porcupine's standalone page, shown in a sandboxed iframe through
	// srcdoc. It stays a plain string: html/template escapes it as an
	// attribute value, and the iframe parses it back.
	Doc     string
	Context bool   // linearizable, shown because a violation names this job
	Note    string // why no view is embedded
	Faults  int    // fault annotations added
}

// linSection is the linearizability part of the report.
type linSection struct {
	Outcome              string
	Ok, Illegal, Unknown int
	Views                []linView
	Cut                  []string
}

// Porcupine's axis is the step doubled (checker/linearizability.go): a call
// at step s sits at 2s, its return at 2s+1.
func linCall(step uint64) int64   { return int64(step) * 2 }
func linReturn(step uint64) int64 { return int64(step)*2 + 1 }

// buildLin renders the illegal partitions, or, when every partition is
// linearizable, the partitions of the jobs the violations name, so the reader
// sees how clients saw the job.
func buildLin(res *checker.Result, h *sim.History, fx *faultIndex) linSection {
	ls := linSection{Outcome: string(res.Linearizability)}
	var pick []int
	for i, p := range res.Partitions {
		switch p.Outcome {
		case checker.LinOk:
			ls.Ok++
		case checker.LinIllegal:
			ls.Illegal++
			pick = append(pick, i)
		default:
			ls.Unknown++
		}
	}
	context := len(pick) == 0
	if context {
		named := map[string]bool{}
		for _, v := range res.Violations {
			named[v.Job] = true
		}
		for i, p := range res.Partitions {
			if named[p.Key] {
				pick = append(pick, i)
			}
		}
	}
	switch limit := maxLinViews; {
	case context && len(pick) > maxContextView:
		ls.Cut = append(ls.Cut, fmt.Sprintf("The %d other jobs the violations name are linearizable too; they are not drawn",
			len(pick)-maxContextView))
		pick = pick[:maxContextView]
	case len(pick) > limit:
		ls.Cut = append(ls.Cut, fmt.Sprintf("%d more illegal partitions are not drawn", len(pick)-limit))
		pick = pick[:limit]
	}
	spent := 0
	for _, i := range pick {
		p := res.Partitions[i]
		lv := linView{Kind: p.Kind, Key: p.Key, Outcome: string(p.Outcome), Ops: p.Ops, Context: context}
		if p.Model.Step == nil {
			lv.Note = "The checker kept no model for this partition."
			ls.Views = append(ls.Views, lv)
			continue
		}
		info := p.Info // AddAnnotations appends: keep the checker's copy as it was
		var notes []porcupine.Annotation
		for _, fi := range fx.of(p.Key) {
			f := h.Faults[fi]
			notes = append(notes, porcupine.Annotation{Tag: "faults", Start: linCall(f.Step), End: linReturn(f.Step),
				Description: f.Kind, Details: fmt.Sprintf("step %d t=%s: %s at %s %s, by %s", f.Step, fmtDur(f.Time),
					f.Effect, f.Point, fx.target(fi), f.Actor), TextColor: "#7f1d1d", BackgroundColor: "#fde2e2"})
		}
		lv.Faults = len(notes)
		for _, v := range res.Violations {
			if v.Job == p.Key && v.Step > 0 {
				notes = append(notes, porcupine.Annotation{Tag: "violation", Start: linCall(v.Step), End: linReturn(v.Step),
					Description: v.Checker, Details: v.Message, TextColor: "#ffffff", BackgroundColor: "#b91c1c"})
			}
		}
		info.AddAnnotations(notes)
		var buf bytes.Buffer
		switch err := visualize(p.Model, info, &buf); {
		case err != nil:
			lv.Note = "porcupine could not draw this partition: " + err.Error()
		case buf.Len() > maxLinDocBytes || spent+buf.Len() > maxLinAllBytes:
			lv.Note = fmt.Sprintf("porcupine's view of this partition is %d KiB, over the report's budget; "+
				"replay the seed to see it", buf.Len()>>10)
		default:
			spent += buf.Len()
			lv.Doc = deferRender(buf.String())
		}
		ls.Views = append(ls.Views, lv)
	}
	return ls
}

// visualize runs porcupine's visualizer, turning a panic on a partial history
// (a check that timed out) into an error: a report must still be written.
func visualize(m porcupine.Model, info porcupine.LinearizationInfo, buf *bytes.Buffer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("visualizer panicked: %v", r)
		}
	}()
	return porcupine.Visualize(m, info, buf)
}

// renderCall is porcupine's top-level call that draws its view.
var renderCall = regexp.MustCompile(`(?m)^(\s*)render\(data\)\s*$`)

// deferRender makes porcupine draw on the next animation frame instead of
// while the page is still loading. It measures its labels with getBBox, and an
// iframe that is not laid out yet (an embedded view loading with the rest of a
// long report) measures every label as zero: the view comes out crushed. A
// page without the call (another porcupine version) is left as it is.
func deferRender(doc string) string {
	return renderCall.ReplaceAllString(doc, "${1}requestAnimationFrame(function () { render(data) })")
}
