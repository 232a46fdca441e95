package kernel

import (
	"bytes"
	"strconv"
	"time"
)

// Trace is the run's decision log: one fixed-format line per decision, folded
// into a running FNV-64 checksum. Same seed and same code give the same bytes.
type Trace struct {
	buf      bytes.Buffer
	sum      uint64
	lines    int
	keep     bool
	maxBytes int
}

// FNV-1a, 64 bit.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// NewTrace returns an empty trace; keep keeps the text (the checksum is
// always computed).
func NewTrace(keep bool) *Trace {
	return &Trace{sum: fnvOffset64, keep: keep, maxBytes: 64 << 20}
}

// add folds one line (the caller formats "step=N t=... actor=... what"): the
// new sum is FNV-1a over the previous sum's 8 bytes, little-endian, then the
// line. The hash is written out here because it runs for every decision.
func (t *Trace) add(line []byte) {
	h := uint64(fnvOffset64)
	for i := range 8 {
		h ^= uint64(byte(t.sum >> (8 * i)))
		h *= fnvPrime64
	}
	for _, c := range line {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	t.sum = h
	t.lines++
	if t.keep && t.buf.Len() < t.maxBytes {
		t.buf.Write(line)
		t.buf.WriteByte('\n')
	}
}

// Checksum is the FNV-64 over every line so far.
func (t *Trace) Checksum() uint64 { return t.sum }

// Lines counts the decisions recorded.
func (t *Trace) Lines() int { return t.lines }

// Bytes is the kept trace text (empty unless the world keeps it).
func (t *Trace) Bytes() []byte { return t.buf.Bytes() }

// appendTime appends d as seconds with milliseconds ("12.034s").
func appendTime(b []byte, d time.Duration) []byte {
	ms := d.Milliseconds()
	b = strconv.AppendInt(b, ms/1000, 10)
	b = append(b, '.')
	frac := ms % 1000
	if frac < 0 {
		frac = -frac
	}
	if frac < 100 {
		b = append(b, '0')
	}
	if frac < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, frac, 10)
	return append(b, 's')
}
