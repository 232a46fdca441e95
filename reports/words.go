package reports

import (
	"fmt"
	"html/template"
	"strings"
	"time"
	"unicode"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
)

// violationView is one violation as the report shows it.
type violationView struct {
	Layer, Checker, Job string
	Step                uint64
	Time                string
	Message             string
	// Words is the violation told as a sentence, naming the faults behind it.
	Words  string
	Faults []faultRef
	// TraceID and LaneID are the ids of its trace excerpt and of its job's
	// swimlane ("" when the report has none).
	TraceID, LaneID string
	// Accounting is a finding about the whole run (a counter or metric
	// mismatch: no job, no step); FirstAccounting marks the first of them,
	// where the report says so.
	Accounting, FirstAccounting bool
}

// faultRef is a fired fault named by a violation.
type faultRef struct {
	Step                      uint64
	Time, Kind, Effect, Point string
	Target, Actor             string
	Touches                   bool // the fault was about the violation's job
}

// maxViolationFaults caps the faults named per violation (the latest kept).
const maxViolationFaults = 5

func violationViews(res *checker.Result, h *history.History, fx *faultIndex) []violationView {
	out := make([]violationView, 0, len(res.Violations))
	accounting := false
	for _, v := range readingOrder(res.Violations) {
		vv := violationView{Layer: string(v.Layer), Checker: v.Checker, Job: v.Job, Step: v.Step,
			Time: fmtDur(v.Time), Message: v.Message, Accounting: accountingFinding(v.Job, v.Step)}
		vv.FirstAccounting = vv.Accounting && !accounting
		accounting = accounting || vv.Accounting
		// The faults that were about this job, up to the violation; the
		// checker's own list when none were (it then names the nearest ones).
		var idx []int
		for _, i := range fx.of(v.Job) {
			if h.Faults[i].Step <= v.Step {
				idx = append(idx, i)
			}
		}
		touching := len(idx) > 0
		if !touching {
			for _, step := range v.FaultSteps {
				idx = append(idx, fx.at(step)...)
			}
		}
		if len(idx) > maxViolationFaults {
			idx = idx[len(idx)-maxViolationFaults:]
		}
		for _, i := range idx {
			f := h.Faults[i]
			vv.Faults = append(vv.Faults, faultRef{Step: f.Step, Time: fmtDur(f.Time), Kind: f.Kind,
				Effect: string(f.Effect), Point: string(f.Point), Target: fx.target(i), Actor: f.Actor, Touches: touching})
		}
		vv.Words = sentence(v, h, vv.Faults)
		out = append(out, vv)
	}
	return out
}

// sentence tells a violation in words from the ground truth, e.g. "job j-17
// published twice: step 311 and step 498; fault PublishFailsAfterStored at
// step 305".
func sentence(v checker.Violation, h *history.History, refs []faultRef) string {
	s := v.Message
	if v.Layer == checker.LayerHarness {
		// Its first line; the stack and the trace's tail follow in the
		// finding's message.
		first, _, _ := strings.Cut(s, "\n")
		s = "the harness failed the run, not the system: " + first
	}
	switch v.Checker {
	case "exactly_once_publish":
		if steps := dispatchSteps(h, v); len(steps) > 1 {
			s = fmt.Sprintf("job %s published %s: %s", v.Job, times(len(steps)), stepList(steps))
		}
	case "exactly_once_execution":
		if ex := executionsOf(h, v); len(ex) > 1 {
			shown := ex
			if len(shown) > 4 {
				shown = shown[:4]
			}
			parts := make([]string, len(shown))
			for i, e := range shown {
				parts[i] = fmt.Sprintf("by worker %s at step %d", e.Worker, e.Step)
			}
			if len(ex) > len(shown) {
				parts = append(parts, fmt.Sprintf("%d more times", len(ex)-len(shown)))
			}
			s = fmt.Sprintf("job %s executed %s: %s", v.Job, times(len(ex)), joinAnd(parts))
		}
	}
	if len(refs) == 0 {
		return s
	}
	// Group by kind: "faults A at steps 103 and 110, and B at step 7".
	var kinds []string
	steps := map[string][]uint64{}
	for _, r := range refs {
		if _, ok := steps[r.Kind]; !ok {
			kinds = append(kinds, r.Kind)
		}
		steps[r.Kind] = append(steps[r.Kind], r.Step)
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + " at " + stepsPhrase(steps[k])
	}
	word := "fault"
	if len(refs) > 1 {
		word = "faults"
	}
	return s + "; " + word + " " + joinAnd(parts)
}

func stepsPhrase(steps []uint64) string {
	switch {
	case len(steps) == 1:
		return fmt.Sprintf("step %d", steps[0])
	case len(steps) > 6:
		return fmt.Sprintf("steps %d, %d, %d, … and %d", steps[0], steps[1], steps[2], steps[len(steps)-1])
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = fmt.Sprint(s)
	}
	return "steps " + joinAnd(parts)
}

// dispatchSteps lists the steps at which the broker stored the violating
// dispatch generation of the job: the one stored at the violation's step.
func dispatchSteps(h *history.History, v checker.Violation) []uint64 {
	gen := -1
	for _, p := range h.Publishes {
		if p.JobID == v.Job && p.Step == v.Step && p.Dispatch && p.Stored() {
			gen = p.Gen
		}
	}
	var steps []uint64
	for _, p := range h.Publishes {
		if p.JobID == v.Job && p.Dispatch && p.Stored() && (gen < 0 || p.Gen == gen) {
			steps = append(steps, p.Step)
		}
	}
	return steps
}

// executionsOf lists the job's executions of the violating generation under
// distinct dispatch ids, up to the violation's step.
func executionsOf(h *history.History, v checker.Violation) []history.Execution {
	gen := -1
	for _, e := range h.Executions {
		if e.JobID == v.Job && e.Step == v.Step {
			gen = e.Gen
		}
	}
	seen := map[string]bool{}
	var out []history.Execution
	for _, e := range h.Executions {
		if e.JobID != v.Job || e.Step > v.Step || (gen >= 0 && e.Gen != gen) || seen[e.DispatchID] {
			continue
		}
		seen[e.DispatchID] = true
		out = append(out, e)
	}
	return out
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// stepList names steps: "step 110 and step 156"; a long list keeps its ends.
func stepList(steps []uint64) string {
	if len(steps) > 6 {
		return fmt.Sprintf("step %d, step %d, step %d, … and step %d", steps[0], steps[1], steps[2], steps[len(steps)-1])
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = fmt.Sprintf("step %d", s)
	}
	return joinAnd(parts)
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// fmtDur renders virtual time to the millisecond ("1m6.005s").
func fmtDur(d time.Duration) string { return d.Round(time.Millisecond).String() }

// breakable escapes s and marks where a line may break inside a long word:
// between the words of a CamelCase name and after a separator, so that a
// fault kind wider than its column wraps as "WorkerRetryableAfter/Success",
// never as "WorkerRetryableAfterSuc/cess". Each such word is an inline block
// (class w): it moves to the next line whole when it fits there, and breaks
// at its marks only when it is wider than a line.
func breakable(s string) template.HTML {
	var b strings.Builder
	for i, word := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		marked, n := markWord(word)
		if n == 0 {
			b.WriteString(marked)
			continue
		}
		b.WriteString(`<span class="w">`)
		b.WriteString(marked)
		b.WriteString(`</span>`)
	}
	return template.HTML(b.String()) // every piece of s went through HTMLEscapeString
}

// markWord escapes a word and puts a <wbr> at each place it may break; n
// counts them.
func markWord(word string) (marked string, n int) {
	var b strings.Builder
	var prev rune
	start := 0
	for i, r := range word {
		if i > 0 && (unicode.IsUpper(r) && unicode.IsLower(prev) || r == '(' || strings.ContainsRune("/_,.:=", prev)) {
			b.WriteString(template.HTMLEscapeString(word[start:i]))
			b.WriteString("<wbr>")
			start = i
			n++
		}
		prev = r
	}
	b.WriteString(template.HTMLEscapeString(word[start:]))
	return b.String(), n
}
