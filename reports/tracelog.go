package reports

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Trace excerpt limits.
const (
	traceContext  = 150 // lines either side of the violation
	traceLineRune = 400 // longer lines are cut
	// Each violation's own excerpt: the lines right around its step, and
	// the job's own events (commits, faults, publishes, executions) before
	// and after it.
	excerptContext   = 4
	excerptJobBefore = 12
	excerptJobAfter  = 3
	maxExcerpts      = maxViolations
)

// traceView is the trace log around the first violation, and a short excerpt
// around each violation.
type traceView struct {
	Kept  bool
	Step  uint64
	Lines []traceLine
	From  int // 1-based line numbers shown
	To    int
	Total int
	Note  string
	Cut   int // lines cut to traceLineRune
	AtEnd bool
	// AtFault: no finding names a step, and the excerpt is around the
	// first fault instead (Step).
	AtFault  bool
	Anchor   string // id of the first highlighted line
	Excerpts []traceExcerpt
	// ExcerptsCut counts violations past maxExcerpts, which have none.
	ExcerptsCut int
}

type traceLine struct {
	N     int
	Step  string
	Text  string
	Class string // hit | fault | commit | job | ""
	Gap   int    // lines left out before this one (excerpts)
}

// traceExcerpt is the trace around one violation: the lines at its step and
// the job's own events near it, with the lines between them left out.
type traceExcerpt struct {
	ID       string // the element id a violation card links to
	Job      string
	Step     uint64
	Checkers []string
	Lines    []traceLine
	After    int // lines of the trace after the last one shown
}

// traceText indexes a trace's lines without copying it: a trace may hold up
// to 64 MiB.
type traceText struct {
	text   []byte
	starts []int
}

func newTraceText(trace []byte) traceText {
	starts := []int{0}
	for i := 0; i < len(trace); {
		j := bytes.IndexByte(trace[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(trace) {
			starts = append(starts, i)
		}
	}
	return traceText{text: trace, starts: starts}
}

func (t traceText) lines() int { return len(t.starts) }

func (t traceText) line(n int) []byte {
	end := len(t.text)
	if n+1 < len(t.starts) {
		end = t.starts[n+1]
	}
	return bytes.TrimRight(t.text[t.starts[n]:end], "\n")
}

// at is the first line at or after step (steps never decrease down the
// trace); the last line when none is.
func (t traceText) at(step uint64) int {
	lo, hi := 0, len(t.starts)
	for lo < hi {
		mid := (lo + hi) / 2
		if s, ok := lineStep(t.line(mid)); ok && s < step {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return min(lo, len(t.starts)-1)
}

// show renders line n for the page; hits are the steps violations name.
func (t traceText) show(n int, hits map[uint64]bool) (traceLine, bool) {
	b := t.line(n)
	tl := traceLine{N: n + 1}
	text := b
	if s, ok := lineStep(b); ok {
		tl.Step = strconv.FormatUint(s, 10)
		text = bytes.TrimPrefix(b, []byte("step="+tl.Step+" "))
		switch {
		case hits[s]:
			tl.Class = "hit"
		case bytes.Contains(text, []byte(" fault ")):
			tl.Class = "fault"
		}
	}
	cut := false
	if r := []rune(string(text)); len(r) > traceLineRune {
		text = []byte(string(r[:traceLineRune]) + " …")
		cut = true
	}
	tl.Text = string(text)
	return tl, cut
}

// buildTrace cuts the kept trace to ±traceContext lines around step (the end
// of the run when step is 0: a violation without a step, such as a stalled
// run, is best read from where the run stopped). hits are every violation's
// steps.
func buildTrace(trace []byte, step uint64, hits map[uint64]bool) traceView {
	tv := traceView{Step: step}
	if len(trace) == 0 {
		tv.Note = "This run did not keep its trace text (the checksum is computed either way). " +
			"Replay the seed with the trace kept to read the decisions around the violation."
		return tv
	}
	tv.Kept = true
	tt := newTraceText(trace)
	tv.Total = tt.lines()
	center := tt.lines() - 1
	if step > 0 {
		center = tt.at(step)
	} else {
		tv.AtEnd = true
	}
	from, to := max(center-traceContext, 0), min(center+traceContext, tt.lines()-1)
	tv.From, tv.To = from+1, to+1
	for n := from; n <= to; n++ {
		tl, cut := tt.show(n, hits)
		if cut {
			tv.Cut++
		}
		if tl.Class == "hit" && tv.Anchor == "" {
			tv.Anchor = fmt.Sprintf("L%d", tl.N)
		}
		tv.Lines = append(tv.Lines, tl)
	}
	return tv
}

// excerptWant is one violation asking for an excerpt.
type excerptWant struct {
	Job, Checker string
	Step         uint64
	// FaultSteps are the steps of the faults about the job: their trace
	// lines may not name it (an ack lost on a subject).
	FaultSteps []uint64
}

// excerptKey identifies an excerpt: violations on one job at one step share.
type excerptKey struct {
	job  string
	step uint64
}

// buildExcerpts cuts one excerpt per distinct job and step the wants name, in
// their order, and returns for each want the id of its excerpt ("" for a
// want past the cap or a trace not kept).
func buildExcerpts(trace []byte, wants []excerptWant, hits map[uint64]bool) ([]traceExcerpt, []string, int) {
	ids := make([]string, len(wants))
	if len(trace) == 0 {
		return nil, ids, 0
	}
	tt := newTraceText(trace)
	byKey := map[excerptKey]int{}
	var keys []excerptKey
	faultSteps := map[string]map[uint64]bool{}
	cut := 0
	for _, w := range wants {
		k := excerptKey{w.Job, w.Step}
		if _, ok := byKey[k]; ok {
			continue
		}
		if len(keys) == maxExcerpts {
			cut++
			continue
		}
		byKey[k] = len(keys)
		keys = append(keys, k)
		if w.Job != "" {
			if faultSteps[w.Job] == nil {
				faultSteps[w.Job] = map[uint64]bool{}
			}
			for _, s := range w.FaultSteps {
				faultSteps[w.Job][s] = true
			}
		}
	}
	jobLines := jobEventLines(tt, faultSteps)

	out := make([]traceExcerpt, len(keys))
	for i, k := range keys {
		ex := traceExcerpt{ID: fmt.Sprintf("trace-v%d", i+1), Job: k.job, Step: k.step}
		center := tt.lines() - 1
		if k.step > 0 {
			center = tt.at(k.step)
		}
		last := center
		for last+1 < tt.lines() { // every line of the violation's own step
			if s, ok := lineStep(tt.line(last + 1)); !ok || s != k.step {
				break
			}
			last++
		}
		pick := map[int]bool{}
		for n := max(center-excerptContext, 0); n <= min(last+excerptContext, tt.lines()-1); n++ {
			pick[n] = true
		}
		own := jobLines[k.job]
		at, _ := slices.BinarySearch(own, center)
		for _, n := range own[max(at-excerptJobBefore, 0):min(at+excerptJobAfter, len(own))] {
			pick[n] = true
		}
		shown := slices.Sorted(maps.Keys(pick))
		prev := -1
		for _, n := range shown {
			tl, _ := tt.show(n, hits)
			if tl.Class == "" && slices.Contains(own, n) {
				tl.Class = "job"
				if bytes.Contains(tt.line(n), []byte(" state ")) {
					tl.Class = "commit"
				}
			}
			tl.Gap = n - prev - 1
			prev = n
			ex.Lines = append(ex.Lines, tl)
		}
		ex.After = tt.lines() - 1 - prev
		out[i] = ex
	}
	for i, w := range wants {
		if j, ok := byKey[excerptKey{w.Job, w.Step}]; ok {
			ids[i] = out[j].ID
			if !slices.Contains(out[j].Checkers, w.Checker) {
				out[j].Checkers = append(out[j].Checkers, w.Checker)
			}
		}
	}
	return out, ids, cut
}

// jobEventMarks are the trace events that belong on a job's excerpt; its
// store reads and lock renewals would drown them.
var jobEventMarks = [][]byte{[]byte(" state "), []byte(" fault "), []byte(" publish "), []byte(" deliver "), []byte(" execute ")}

// jobEventLines finds, for each job, the lines of its own events, in order:
// lines that name the job as a whole token, and fault lines at the steps of
// faults that were about it. One pass over the trace.
func jobEventLines(tt traceText, faultSteps map[string]map[uint64]bool) map[string][]int {
	out := map[string][]int{}
	if len(faultSteps) == 0 {
		return out
	}
	for n := 0; n < tt.lines(); n++ {
		b := tt.line(n)
		if !slices.ContainsFunc(jobEventMarks, func(m []byte) bool { return bytes.Contains(b, m) }) {
			continue
		}
		step, _ := lineStep(b)
		seen := map[string]bool{}
		for _, tok := range tokens(string(b)) {
			if tok = trimEquals(tok); faultSteps[tok] != nil && !seen[tok] {
				seen[tok] = true
				out[tok] = append(out[tok], n)
			}
		}
		if bytes.Contains(b, []byte(" fault ")) { // about a job by the fault index, though it may not name it
			for job, steps := range faultSteps {
				if steps[step] && !seen[job] {
					out[job] = append(out[job], n)
				}
			}
		}
	}
	return out
}

// trimEquals takes the value of a key=value token ("id=j-1" -> "j-1").
func trimEquals(tok string) string {
	if _, v, ok := strings.Cut(tok, "="); ok {
		return v
	}
	return tok
}

// lineStep reads the step a trace line starts with ("step=311 t=...").
func lineStep(b []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("step="))
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	s, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	return s, err == nil
}
