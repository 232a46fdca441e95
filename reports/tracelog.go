package reports

import (
	"bytes"
	"fmt"
	"strconv"
)

// Trace excerpt limits.
const (
	traceContext  = 150 // lines either side of the violation
	traceLineRune = 400 // longer lines are cut
)

// traceView is the trace log around the first violation.
type traceView struct {
	Kept   bool
	Step   uint64
	Lines  []traceLine
	From   int // 1-based line numbers shown
	To     int
	Total  int
	Note   string
	Cut    int // lines cut to traceLineRune
	AtEnd  bool
	Anchor string // id of the first highlighted line
}

type traceLine struct {
	N     int
	Step  string
	Text  string
	Class string // hit | fault | ""
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
	// Line starts only: a trace may hold up to 64 MiB.
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
	tv.Total = len(starts)
	line := func(n int) []byte {
		end := len(trace)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		return bytes.TrimRight(trace[starts[n]:end], "\n")
	}
	// The first line at or after the step.
	center := len(starts) - 1
	if step > 0 {
		lo, hi := 0, len(starts)
		for lo < hi { // steps never decrease down the trace
			mid := (lo + hi) / 2
			if s, ok := lineStep(line(mid)); ok && s < step {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo < len(starts) {
			center = lo
		}
	} else {
		tv.AtEnd = true
	}
	from, to := max(center-traceContext, 0), min(center+traceContext, len(starts)-1)
	tv.From, tv.To = from+1, to+1
	for n := from; n <= to; n++ {
		b := line(n)
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
		if r := []rune(string(text)); len(r) > traceLineRune {
			text = []byte(string(r[:traceLineRune]) + " …")
			tv.Cut++
		}
		tl.Text = string(text)
		if tl.Class == "hit" && tv.Anchor == "" {
			tv.Anchor = fmt.Sprintf("L%d", tl.N)
		}
		tv.Lines = append(tv.Lines, tl)
	}
	return tv
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
