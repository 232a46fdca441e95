package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
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
	// Rows are the view's rows (clients with operations, then annotation
	// tags); Height is the frame's first height in pixels, before the view
	// measures itself.
	Rows   int
	Height int
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
func buildLin(res *checker.Result, h *history.History, fx *faultIndex) linSection {
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
		// The jobs the violations name, the first finding's first.
		at := map[string][]int{}
		for i, p := range res.Partitions {
			at[p.Key] = append(at[p.Key], i)
		}
		picked := map[string]bool{}
		for _, v := range readingOrder(res.Violations) {
			if !picked[v.Job] {
				picked[v.Job] = true
				pick = append(pick, at[v.Job]...)
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
			doc, rows := fitClients(buf.String(), clientLabel(p.Kind))
			spent += len(doc)
			lv.Doc, lv.Rows = deferRender(doc), rows
			lv.Height = frameHeight(rows)
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

// clientLabel names a porcupine client of a partition of kind: the checker
// makes the store client 0 of a job's history and gateway client n its
// client n+1 (checker/linearizability.go, checker/admission.go).
func clientLabel(kind string) func(id int) string {
	return func(id int) string {
		if kind == "job" && id == 0 {
			return "store"
		}
		return fmt.Sprintf("client %d", id-1)
	}
}

// dataLine is the line of porcupine's page that holds its data as JSON.
var dataLine = regexp.MustCompile(`(?m)^(\s*)const data = (.+)$`)

// fitClients renumbers the clients of porcupine's view to the ones that have
// operations in it. porcupine draws a row for every client id from 0 to the
// largest, so one job touched by client 11 gets ten empty rows above its only
// busy one. The real names go to the rows through rowLabels. It returns the
// page and its number of rows (clients and annotation tags); a page it
// cannot read (another porcupine version) is returned as it was, with 0.
func fitClients(doc string, label func(id int) string) (string, int) {
	m := dataLine.FindStringSubmatchIndex(doc)
	if m == nil {
		return doc, 0
	}
	// Decoded as raw fields, so that fields this code does not know survive.
	type fields = map[string]json.RawMessage
	var data fields
	var parts []fields
	var notes []fields
	if json.Unmarshal([]byte(doc[m[4]:m[5]]), &data) != nil ||
		json.Unmarshal(data["Partitions"], &parts) != nil || json.Unmarshal(data["Annotations"], &notes) != nil {
		return doc, 0
	}
	histories := make([][]fields, len(parts))
	for i, p := range parts {
		if json.Unmarshal(p["History"], &histories[i]) != nil {
			return doc, 0
		}
	}
	clientOf := func(el fields) (int, bool) {
		var id int
		return id, json.Unmarshal(el["ClientId"], &id) == nil
	}
	tagOf := func(el fields) string {
		var tag string
		_ = json.Unmarshal(el["Tag"], &tag)
		return tag
	}
	used := map[int]bool{}
	for _, h := range histories {
		for _, el := range h {
			id, ok := clientOf(el)
			if !ok {
				return doc, 0
			}
			used[id] = true
		}
	}
	tags := map[string]bool{}
	for _, a := range notes {
		if tag := tagOf(a); tag != "" {
			tags[tag] = true
		} else if id, ok := clientOf(a); ok {
			used[id] = true
		}
	}
	ids := slices.Sorted(maps.Keys(used))
	dense := make(map[int]int, len(ids))
	labels := make([]string, len(ids))
	for i, id := range ids {
		dense[id] = i
		labels[i] = label(id)
	}
	renumber := func(el fields) {
		if id, ok := clientOf(el); ok {
			if n, ok := dense[id]; ok {
				el["ClientId"] = json.RawMessage(strconv.Itoa(n))
			}
		}
	}
	for i, h := range histories {
		for _, el := range h {
			renumber(el)
		}
		b, err := json.Marshal(h)
		if err != nil {
			return doc, 0
		}
		parts[i]["History"] = b
	}
	for _, a := range notes {
		if tagOf(a) == "" { // a client's own annotation
			renumber(a)
		}
	}
	var err error
	if data["Partitions"], err = json.Marshal(parts); err != nil {
		return doc, 0
	}
	if data["Annotations"], err = json.Marshal(notes); err != nil {
		return doc, 0
	}
	out, err := json.Marshal(data)
	if err != nil {
		return doc, 0
	}
	names, _ := json.Marshal(labels) // json.Marshal escapes <, > and &: safe inside a script
	indent := doc[m[2]:m[3]]
	return doc[:m[4]] + string(out) + "\n" + indent + "const rowLabels = " + string(names) + doc[m[5]:],
		len(ids) + len(tags)
}

// Porcupine's geometry (visualization/index.js and index.css): rows of 30 px
// boxes 15 px apart, 10 px padding, the canvas 45 px below the legend.
const (
	porcupineRow    = 45
	porcupineTop    = 45 + 2*10 - 15
	porcupineScroll = 20 // a horizontal scroll bar
	maxFrameHeight  = 640
)

// frameHeight is the iframe's height before the view reports its own.
func frameHeight(rows int) int {
	if rows == 0 {
		return 520
	}
	return min(porcupineTop+rows*porcupineRow+porcupineScroll, maxFrameHeight)
}

// renderCall is porcupine's top-level call that draws its view.
var renderCall = regexp.MustCompile(`(?m)^(\s*)render\(data\)\s*$`)

// deferRender makes porcupine draw once its frame is laid out, then fits the
// drawing to the frame. It measures its labels with getBBox, and an iframe
// that is not laid out yet measures every label as zero: the view comes out
// crushed. A page without the call (another porcupine version) is left as it
// is.
func deferRender(doc string) string {
	if !renderCall.MatchString(doc) {
		return doc
	}
	return renderCall.ReplaceAllLiteralString(doc, fitScript+
		"\nwhenLaidOut(function () { render(data); fitView(typeof rowLabels === 'undefined' ? [] : rowLabels) }, 100)")
}

// fitScript runs inside porcupine's page after it has drawn: it names the
// rows, scales the drawing down to the frame's width (not below minScale,
// where its text stops being legible), scrolls the first illegal
// linearization point into the middle of the frame, and tells the report its
// height and whether that point is in view (the report sizes the frame; the
// browser test reads the answer). The body's data attributes say the same for
// a view opened on its own.
const fitScript = `
// whenLaidOut draws once text has a size: a frame that is not laid out yet
// (an embedded view loading with the rest of a long report) measures every
// label as zero, and the view comes out crushed. It tries at once, then every
// 50 ms; after tries attempts it draws regardless.
function whenLaidOut(draw, tries) {
  var probe = document.createElementNS('http://www.w3.org/2000/svg', 'svg')
  var text = document.createElementNS(probe.namespaceURI, 'text')
  text.textContent = 'x'
  probe.appendChild(text)
  document.body.appendChild(probe)
  var ready = text.getBBox().width > 0 && document.documentElement.clientWidth > 0
  document.body.removeChild(probe)
  if (ready || tries <= 0) { draw() } else { setTimeout(function () { whenLaidOut(draw, tries - 1) }, 50) }
}

function fitView(labels) {
  var minScale = 0.7
  var svg = document.querySelector('#canvas svg')
  if (!svg) { return }
  var rows = svg.querySelector('g').querySelectorAll('text')
  for (var i = 0; i < labels.length && i < rows.length; i++) { rows[i].textContent = labels[i] }
  var w = svg.width.baseVal.value, h = svg.height.baseVal.value
  var box = svg.getBBox()
  var x0 = Math.min(box.x, 0) - 4
  var width = Math.max(box.x + box.width, w) - x0
  var room = document.documentElement.clientWidth - 8
  var scale = Math.min(1, Math.max(room / width, minScale))
  svg.setAttribute('viewBox', x0 + ' 0 ' + width + ' ' + h)
  svg.setAttribute('width', width * scale)
  svg.setAttribute('height', h * scale)
  // The row names stay at the left edge when the drawing scrolls sideways,
  // on a white column of their own, so a row is never a nameless one.
  var column = document.createElementNS(svg.namespaceURI, 'g')
  var right = x0
  for (var n = 0; n < rows.length; n++) {
    var b = rows[n].getBBox()
    right = Math.max(right, b.x + b.width)
  }
  var paper = document.createElementNS(svg.namespaceURI, 'rect')
  paper.setAttribute('x', x0)
  paper.setAttribute('y', 0)
  paper.setAttribute('width', right + 6 - x0)
  paper.setAttribute('height', h)
  paper.setAttribute('fill', '#fff')
  column.appendChild(paper)
  for (var m = 0; m < rows.length; m++) { column.appendChild(rows[m]) }
  svg.appendChild(column)
  window.addEventListener('scroll', function () {
    column.setAttribute('transform', 'translate(' + window.scrollX / scale + ',0)')
  })
  var bad = null
  var points = svg.querySelectorAll('.linearization-invalid.linearization-point')
  for (var j = 0; j < points.length; j++) {
    if (!points[j].parentNode.classList.contains('hidden')) {
      var r = points[j].getBoundingClientRect()
      if (bad === null || r.left < bad.left) { bad = r }
    }
  }
  // The frame's size: innerWidth and innerHeight read 0 in some embedded frames.
  var vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight
  if (bad !== null) {
    window.scrollTo(Math.max(bad.left + window.scrollX - vw / 2, 0), 0)
  }
  var inView = false
  for (var k = 0; k < points.length; k++) {
    if (points[k].parentNode.classList.contains('hidden')) { continue }
    var p = points[k].getBoundingClientRect()
    if (p.right > 0 && p.left < vw && p.bottom > 0 && p.top < vh) { inView = true; break }
  }
  var illegal = bad !== null
  document.body.dataset.scale = scale.toFixed(2)
  document.body.dataset.illegal = illegal
  document.body.dataset.illegalInView = inView
  // The frame starts at an estimate; the content's own height is the
  // canvas's bottom (plus a scroll bar when the drawing is wider).
  var height = document.querySelector('#canvas').getBoundingClientRect().bottom + window.scrollY + 6
  if (document.documentElement.scrollWidth > document.documentElement.clientWidth) { height += 16 }
  if (parent !== window) {
    parent.postMessage({porcupineView: true, height: height, scale: scale, illegal: illegal, illegalInView: inView}, '*')
  }
}
`
