package sim

import (
	"bytes"
	"fmt"
	"hash/fnv"
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

const fnvOffset64 = 14695981039346656037

func newTrace(keep bool) *Trace {
	return &Trace{sum: fnvOffset64, keep: keep, maxBytes: 64 << 20}
}

// add folds one line (the caller formats "step=N t=... actor=... what").
func (t *Trace) add(line string) {
	h := fnv.New64a()
	var b [8]byte
	for i := range 8 {
		b[i] = byte(t.sum >> (8 * i))
	}
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(line))
	t.sum = h.Sum64()
	t.lines++
	if t.keep && t.buf.Len() < t.maxBytes {
		t.buf.WriteString(line)
		t.buf.WriteByte('\n')
	}
}

// Checksum is the FNV-64 over every line so far.
func (t *Trace) Checksum() uint64 { return t.sum }

// Lines counts the decisions recorded.
func (t *Trace) Lines() int { return t.lines }

// Bytes is the kept trace text (empty unless the world keeps it).
func (t *Trace) Bytes() []byte { return t.buf.Bytes() }

// fmtTime renders virtual time since the epoch as seconds with milliseconds.
func fmtTime(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%d.%03ds", ms/1000, ms%1000)
}
