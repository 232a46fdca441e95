package reports

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/dispatchsim/dispatchsim/history"
)

// stepClock maps a step to the virtual time of the last event at or before it.
type stepClock struct {
	steps []uint64
	times []time.Duration
}

func newStepClock(h *history.History) stepClock {
	type ev struct {
		s uint64
		t time.Duration
	}
	var evs []ev
	for _, s := range h.States {
		evs = append(evs, ev{s.Step, s.Time})
	}
	for _, p := range h.Publishes {
		evs = append(evs, ev{p.Step, p.Time})
	}
	for _, f := range h.Faults {
		evs = append(evs, ev{f.Step, f.Time})
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].s < evs[j].s })
	var c stepClock
	for _, e := range evs {
		c.steps = append(c.steps, e.s)
		c.times = append(c.times, e.t)
	}
	return c
}

func (c stepClock) at(step uint64) time.Duration {
	i := sort.Search(len(c.steps), func(i int) bool { return c.steps[i] > step })
	if i == 0 {
		return 0
	}
	return c.times[i-1]
}

// fmtShort renders an axis time: "12.3s", "4m05s".
func fmtShort(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func pubClass(p history.PublishRecord) string {
	switch p.Outcome {
	case history.PublishStored:
		if p.Dispatch {
			return "dispatch"
		}
		return "stored"
	case history.PublishFailedStored:
		return "ambiguous"
	case history.PublishFailedClean:
		return "failed"
	case history.PublishDeduplicated:
		return "dedup"
	}
	return "stored"
}

func diamond(cx, cy, r float64) string {
	return fmt.Sprintf("%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f", cx, cy-r, cx+r, cy, cx, cy+r, cx-r, cy)
}

// triangle points down from top: a fault strikes the lane.
func triangle(cx, top, r float64) string {
	return fmt.Sprintf("%.1f,%.1f %.1f,%.1f %.1f,%.1f", cx-r, top, cx+r, top, cx, top+r*1.4)
}

// shorten cuts a label to n runes with an ellipsis; the full id is in a title.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// naturalLess orders ids with embedded numbers by value: j-2 before j-10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.ParseUint(a[:da], 10, 64)
			nb, _ := strconv.ParseUint(b[:db], 10, 64)
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && n < 18 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
