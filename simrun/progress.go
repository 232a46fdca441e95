package simrun

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a run's advance: a live bar on a terminal (seeds done,
// seeds/s, failures so far), plain lines otherwise (a CI log).
type progress struct {
	w        io.Writer
	what     string
	bar      *progressbar.ProgressBar
	total    int
	finished int
	failed   int
	start    time.Time
	nextLine int
}

func newProgress(w io.Writer, total int, what string) *progress {
	p := &progress{w: w, what: what, total: total, start: time.Now()} // determinism-ok: progress display
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("seeds"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	} else {
		fmt.Fprintf(w, "simrun: %s: %d seeds\n", what, total)
	}
	return p
}

// done counts one finished seed.
func (p *progress) done(ok bool) {
	p.finished++
	if !ok {
		p.failed++
	}
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s · %d failed", p.what, p.failed))
		_ = p.bar.Add(1)
		return
	}
	// A line at every tenth of the run, so a CI log shows it moving.
	if p.finished >= p.nextLine || p.finished == p.total {
		p.line()
		p.nextLine = p.finished + max(p.total/10, 1)
	}
}

func (p *progress) line() {
	rate := float64(p.finished) / max(time.Since(p.start).Seconds(), 1e-9) // determinism-ok: progress display
	fmt.Fprintf(p.w, "simrun: %d/%d seeds, %.1f seeds/s, %d failed\n", p.finished, p.total, rate, p.failed)
}

// fail shows a failure as it happens, above the bar.
func (p *progress) fail(text string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.w, oneLine(text))
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
