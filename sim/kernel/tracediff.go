package kernel

import "bytes"

// TraceDifference is where two traces of one seed first part: Line is 1-based,
// A and B are that line in each trace ("" past a trace's end).
type TraceDifference struct {
	Line int
	A, B string
}

// FirstTraceDifference compares two traces line by line and returns the first
// line on which they differ; ok is false when the traces are identical. A
// trace that is a prefix of the other differs on the line after its end.
func FirstTraceDifference(a, b []byte) (diff TraceDifference, ok bool) {
	line := 1
	for len(a) > 0 || len(b) > 0 {
		la, ra := cutLine(a)
		lb, rb := cutLine(b)
		if !bytes.Equal(la, lb) || (len(a) == 0) != (len(b) == 0) {
			return TraceDifference{Line: line, A: string(la), B: string(lb)}, true
		}
		a, b = ra, rb
		line++
	}
	return TraceDifference{}, false
}

func cutLine(b []byte) (line, rest []byte) {
	line, rest, _ = bytes.Cut(b, []byte("\n"))
	return line, rest
}
