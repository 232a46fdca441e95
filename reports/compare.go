package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/exp/stats"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Comparison is the same seeds run against several systems, side by side:
// seed 000's trade-off table, measured.
type Comparison struct {
	Suite    string        `json:"suite"`
	Seeds    int           `json:"seeds"`
	Checkers []string      `json:"checkers"` // every checker that fired on any system, sorted
	Systems  []SystemFacts `json:"systems"`
	// Verdict is the worst of the systems' verdicts: simrun compare exits
	// with its code (ExitCode).
	Verdict string `json:"verdict"`
}

// SystemFacts is one system's column.
type SystemFacts struct {
	System string `json:"system"`
	// Verdict is the system's verdict over the seeds, judged as simrun run
	// judges a suite (Judge): a failing seed, or a declared fault kind or
	// sometimes-branch the cases never reached, fails it. ExitCode is the
	// code simrun run would exit with.
	Verdict  string `json:"verdict,omitempty"`
	ExitCode int    `json:"exit_code"`
	// FailingSeeds are the seeds whose verdict fails (expected and
	// environment findings do not); FailedSeeds counts every seed with a
	// violation.
	FailingSeeds int `json:"failing_seeds"`
	FailedSeeds  int `json:"seeds_with_violations"`
	// NotApplicable are the cases whose point is a feature the system
	// lacks: their seeds are measured with the rest, never judged.
	NotApplicable []NotApplicableCase `json:"not_applicable,omitempty"`
	// Judged is how many seeds the verdict was judged over.
	Judged     int            `json:"judged_seeds"`
	Violations map[string]int `json:"violations"` // by checker
	// KindsFired of KindsDeclared fault kinds fired in every case that
	// declares them (cases declare none on seeds a flag chose); KindsSeen
	// kinds fired at all. SometimesReached of SometimesDeclared branches the
	// cases require some seed to reach were reached. NeverFired names what
	// was not, as the cases say it.
	KindsSeen         int      `json:"kinds_seen"`
	KindsDeclared     int      `json:"kinds_declared"`
	KindsFired        int      `json:"kinds_fired"`
	SometimesDeclared int      `json:"sometimes_declared"`
	SometimesReached  int      `json:"sometimes_reached"`
	NeverFired        []string `json:"never_fired,omitempty"`
	// DuplicateExecutions counts executions of a (job, generation) beyond its first.
	DuplicateExecutions int `json:"duplicate_executions"`
	// BlindJobs ended timed out (the spec's TimedOut state) without their
	// dispatch ever stored by the broker;
	// BlindWindow is how long each sat dispatched first (mean and max).
	BlindJobs              int     `json:"blind_jobs"`
	BlindWindowMeanSeconds float64 `json:"blind_window_mean_seconds"`
	BlindWindowMaxSeconds  float64 `json:"blind_window_max_seconds"`
	// Latency is submit to first execution, over every executed job.
	LatencyP50Seconds float64 `json:"latency_p50_seconds"`
	LatencyP90Seconds float64 `json:"latency_p90_seconds"`
	LatencyP99Seconds float64 `json:"latency_p99_seconds"`
	CommandsPerJob    float64 `json:"store_commands_per_job"`
	ScriptsPerJob     float64 `json:"scripts_per_job"`
	SeedsPerSecond    float64 `json:"seeds_per_second"`
}

// CompareSystem summarizes one system's runs of the compared seeds; spec
// names its timed-out and dispatched states.
func CompareSystem(system string, spec sut.Spec, runs []Run, wall time.Duration) SystemFacts {
	seeds := make([]SeedFacts, len(runs))
	for i, r := range runs {
		seeds[i] = CompareSeed(spec, r)
	}
	return SumSeeds(system, seeds, wall)
}

// SeedFacts is what one seed adds to its system's column. It is small enough
// to come back from a worker process as JSON, so seeds can run in parallel.
type SeedFacts struct {
	Failed     bool           `json:"failed,omitempty"`
	Violations map[string]int `json:"violations,omitempty"` // by checker
	Jobs       int            `json:"jobs"`
	Commands   int            `json:"commands"`
	Scripts    int            `json:"scripts"`
	Duplicates int            `json:"duplicate_executions"`
	// Latencies and BlindWindows are per job, in seconds (see SystemFacts).
	Latencies    []float64 `json:"latencies,omitempty"`
	BlindWindows []float64 `json:"blind_windows,omitempty"`
}

// CompareSeed reads one run's contribution; spec names the system's
// timed-out and dispatched states.
func CompareSeed(spec sut.Spec, r Run) SeedFacts {
	var f SeedFacts
	if r.Result != nil {
		f.Failed = r.Result.SystemFailed()
		for _, v := range r.Result.Violations {
			if f.Violations == nil {
				f.Violations = map[string]int{}
			}
			name := v.Checker
			if v.Layer == checker.LayerEnvironment {
				name = "environment: " + name // the store's broken contract, not the system's
			}
			f.Violations[name]++
		}
	}
	if h := r.History; h != nil {
		f.Jobs, f.Commands, f.Scripts = len(h.Submitted), h.Redis.Commands, h.Redis.Scripts
		f.Duplicates = duplicateExecutions(h)
		f.Latencies = firstExecutionLatencies(h)
		f.BlindWindows = blindWindows(h, spec)
	}
	return f
}

// SumSeeds is a system's column from its seeds' facts, in seed order, and the
// wall time they took.
func SumSeeds(system string, seeds []SeedFacts, wall time.Duration) SystemFacts {
	f := SystemFacts{System: system, Violations: map[string]int{}}
	var latency, blind []float64
	jobs, commands, scripts := 0, 0, 0
	for _, s := range seeds {
		if s.Failed {
			f.FailedSeeds++
		}
		for checker, n := range s.Violations {
			f.Violations[checker] += n
		}
		jobs += s.Jobs
		commands += s.Commands
		scripts += s.Scripts
		f.DuplicateExecutions += s.Duplicates
		latency = append(latency, s.Latencies...)
		blind = append(blind, s.BlindWindows...)
	}
	f.BlindJobs = len(blind)
	if len(blind) > 0 {
		f.BlindWindowMeanSeconds = stats.Mean(blind)
		f.BlindWindowMaxSeconds = stats.Quantiles(blind, 1.0)[0]
	}
	if len(latency) > 0 {
		q := stats.Quantiles(latency, 0.5, 0.9, 0.99)
		f.LatencyP50Seconds, f.LatencyP90Seconds, f.LatencyP99Seconds = q[0], q[1], q[2]
	}
	if jobs > 0 {
		f.CommandsPerJob = float64(commands) / float64(jobs)
		f.ScriptsPerJob = float64(scripts) / float64(jobs)
	}
	if wall > 0 {
		f.SeedsPerSecond = float64(len(seeds)) / wall.Seconds()
	}
	return f
}

func duplicateExecutions(h *history.History) int {
	seen := map[string]bool{}
	n := 0
	for _, e := range h.Executions {
		k := fmt.Sprintf("%s/%d", e.JobID, e.Gen)
		if seen[k] {
			n++
		}
		seen[k] = true
	}
	return n
}

func firstExecutionLatencies(h *history.History) []float64 {
	first := map[string]time.Duration{}
	for _, e := range h.Executions {
		if _, ok := first[e.JobID]; !ok {
			first[e.JobID] = e.Time
		}
	}
	var out []float64
	for _, s := range h.Submitted {
		if t, ok := first[s.JobID]; ok && t >= s.At {
			out = append(out, (t - s.At).Seconds())
		}
	}
	return out
}

// blindWindows: for each job that ended timed out with no dispatch ever
// stored, how long it sat dispatched before the timeout.
func blindWindows(h *history.History, spec sut.Spec) []float64 {
	published := map[string]bool{}
	for _, p := range h.Publishes {
		if p.Dispatch && p.Stored() {
			published[p.JobID] = true
		}
	}
	dispatchedAt := map[string]time.Duration{}
	var out []float64
	for _, s := range h.States {
		if s.To == spec.Dispatched {
			if _, ok := dispatchedAt[s.JobID]; !ok {
				dispatchedAt[s.JobID] = s.Time
			}
		}
		if s.To == spec.TimedOut && !published[s.JobID] {
			if at, ok := dispatchedAt[s.JobID]; ok {
				out = append(out, (s.Time - at).Seconds())
			}
		}
	}
	return out
}

// Judge fills the system's verdict and coverage from the summary of its
// seeds (Build over the same cases, as simrun run writes it).
func (f *SystemFacts) Judge(s *Summary) {
	f.Verdict, f.ExitCode = s.Verdict, s.ExitCode()
	f.NotApplicable, f.Judged = s.NotApplicable, len(s.Seeds)
	f.FailingSeeds = 0
	for _, r := range s.Seeds {
		if failing(r.Verdict) {
			f.FailingSeeds++
		}
	}
	kinds, missed := map[string]bool{}, map[string]bool{}
	branches, unreached := map[string]bool{}, map[string]bool{}
	f.NeverFired = nil
	for _, c := range s.Cases {
		for _, k := range c.Declared {
			kinds[k] = true
			if slices.Contains(c.NeverFired, k) {
				missed[k] = true
			}
		}
		for _, b := range c.Sometimes {
			branches[b] = true
			if slices.Contains(c.NeverFired, "sometimes "+b+" never reached") {
				unreached[b] = true
			}
		}
		for _, n := range c.NeverFired {
			if !slices.Contains(f.NeverFired, n) {
				f.NeverFired = append(f.NeverFired, n)
			}
		}
	}
	f.KindsDeclared, f.KindsFired = len(kinds), len(kinds)-len(missed)
	f.KindsSeen = 0
	for _, n := range s.Coverage.Fired {
		if n > 0 {
			f.KindsSeen++
		}
	}
	f.SometimesDeclared, f.SometimesReached = len(branches), len(branches)-len(unreached)
}

// NewComparison puts the systems' columns side by side.
func NewComparison(suite string, seeds int, systems []SystemFacts) Comparison {
	c := Comparison{Suite: suite, Seeds: seeds, Systems: systems, Verdict: VerdictPass}
	set := map[string]bool{}
	for _, s := range systems {
		for k := range s.Violations {
			set[k] = true
		}
		if s.Verdict != "" {
			c.Verdict = worse(c.Verdict, s.Verdict)
		}
	}
	for k := range set {
		c.Checkers = append(c.Checkers, k)
	}
	sort.Strings(c.Checkers)
	return c
}

// ExitCode is simrun compare's exit code: the code of the worst system's
// verdict (0 pass, 1 safety, 3 liveness, 4 inconclusive, 6 incomplete).
func (c Comparison) ExitCode() int {
	s := Summary{Verdict: c.Verdict}
	return s.ExitCode()
}

// Names are the systems compared, "a vs b".
func (c Comparison) Names() string {
	names := make([]string, len(c.Systems))
	for i, s := range c.Systems {
		names[i] = s.System
	}
	return strings.Join(names, " vs ")
}

// compareRow is one row of the table: a label, a sentence saying what it
// counts, and a cell per system.
type compareRow struct {
	Label, Why string
	Cells      []string
	// Verdicts marks the verdict row; Pills are its cells' verdict classes.
	Verdicts bool
	Pills    []string
	// Differ is true when the systems' cells are not all the same; Judged
	// marks the rows the verdict rests on (the rest are measurements).
	Differ, Judged bool
}

// rows is the table: one row per figure, one cell per system.
func (c Comparison) rows() []compareRow {
	row := func(label, why string, cell func(s SystemFacts) string) compareRow {
		r := compareRow{Label: label, Why: why}
		for _, s := range c.Systems {
			r.Cells = append(r.Cells, cell(s))
		}
		for _, x := range r.Cells {
			r.Differ = r.Differ || x != r.Cells[0]
		}
		return r
	}
	secs := func(f float64) string { return fmt.Sprintf("%.2fs", f) }
	verdict := row("verdict", "The system's verdict over these seeds, judged as simrun run judges the suite "+
		"(a failing seed, or a declared fault kind or branch never reached, fails it), with its exit code.",
		func(s SystemFacts) string {
			if s.Verdict == "" {
				return "not judged"
			}
			return fmt.Sprintf("%s (exit %d)", s.Verdict, s.ExitCode)
		})
	verdict.Verdicts = true
	for _, s := range c.Systems {
		verdict.Pills = append(verdict.Pills, "v-"+s.Verdict)
	}
	out := []compareRow{verdict,
		row("failing seeds", "Seeds whose verdict fails the gate; an expected finding or one the environment's broken contract explains does not.",
			func(s SystemFacts) string { return fmt.Sprintf("%d of %d judged", s.FailingSeeds, s.Judged) }),
		row("cases not applicable", "Cases whose point is a feature the system lacks (its spec says so): their seeds count in the "+
			"measurements below, never in the verdict.",
			func(s SystemFacts) string {
				if len(s.NotApplicable) == 0 {
					return "none"
				}
				names := make([]string, len(s.NotApplicable))
				for i, na := range s.NotApplicable {
					names[i] = na.Case
				}
				return fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", "))
			}),
		row("fault kinds fired", "Declared fault kinds that fired in every case declaring them, of those the cases declare for this system "+
			"(a case declares none on seeds a flag chose); one that never fired fails the verdict.",
			func(s SystemFacts) string {
				if s.KindsDeclared == 0 {
					return fmt.Sprintf("%d fired, none declared", s.KindsSeen)
				}
				return fmt.Sprintf("%d of %d declared", s.KindsFired, s.KindsDeclared)
			}),
		row("sometimes-branches reached", "Risky branches the cases require some seed to reach, reached, of those declared; one never reached fails the verdict.",
			func(s SystemFacts) string {
				if s.SometimesDeclared == 0 {
					return "none declared"
				}
				return fmt.Sprintf("%d of %d declared", s.SometimesReached, s.SometimesDeclared)
			}),
		row("seeds with violations (expected included)", "Seeds on which any checker fired, the scenario's expected finding included.",
			func(s SystemFacts) string { return fmt.Sprintf("%d of %d", s.FailedSeeds, c.Seeds) })}
	for _, k := range c.Checkers {
		out = append(out, row("violations: "+k, "How many times this checker fired, over all seeds.",
			func(s SystemFacts) string { return fmt.Sprint(s.Violations[k]) }))
	}
	declares := func(n func(s SystemFacts) int) bool {
		for _, s := range c.Systems {
			if n(s) > 0 {
				return true
			}
		}
		return false
	}
	for i := range out {
		switch out[i].Label {
		case "fault kinds fired": // judged only where a case declares kinds
			out[i].Judged = declares(func(s SystemFacts) int { return s.KindsDeclared })
		case "sometimes-branches reached":
			out[i].Judged = declares(func(s SystemFacts) int { return s.SometimesDeclared })
		default:
			out[i].Judged = true
		}
	}
	return append(out,
		row("duplicate executions", "Executions of a job's dispatch generation beyond its first, by any worker.",
			func(s SystemFacts) string { return fmt.Sprint(s.DuplicateExecutions) }),
		row("timed out, dispatch never stored", "Jobs that ended in the system's timed-out state though the broker never stored their dispatch.",
			func(s SystemFacts) string { return fmt.Sprint(s.BlindJobs) }),
		row("blind window mean / max", "How long each of those jobs sat dispatched before it timed out.", func(s SystemFacts) string {
			return secs(s.BlindWindowMeanSeconds) + " / " + secs(s.BlindWindowMaxSeconds)
		}),
		row("submit→first execution p50", "Median time from a job's submit to its first execution, over executed jobs.",
			func(s SystemFacts) string { return secs(s.LatencyP50Seconds) }),
		row("submit→first execution p90", "The 90th percentile of that time.", func(s SystemFacts) string { return secs(s.LatencyP90Seconds) }),
		row("submit→first execution p99", "The 99th percentile of that time.", func(s SystemFacts) string { return secs(s.LatencyP99Seconds) }),
		row("store commands per job", "Store commands the system sent, per submitted job.",
			func(s SystemFacts) string { return fmt.Sprintf("%.1f", s.CommandsPerJob) }),
		row("scripts per job", "Lua scripts the system ran in the store, per submitted job.",
			func(s SystemFacts) string { return fmt.Sprintf("%.1f", s.ScriptsPerJob) }),
		row("seeds/s", "Seeds simulated and checked per wall-clock second (the machine's, not the system's, speed).",
			func(s SystemFacts) string { return fmt.Sprintf("%.1f", s.SeedsPerSecond) }))
}

// verdictsDiffer says in words how the systems' verdicts differ, "" when
// they agree.
func (c Comparison) verdictsDiffer() string {
	var parts []string
	differ := false
	for _, s := range c.Systems {
		parts = append(parts, s.System+" "+verdictLabel(s.Verdict))
		if s.Verdict != c.Systems[0].Verdict {
			differ = true
		}
	}
	if !differ {
		return ""
	}
	return "the verdicts differ: " + joinAnd(parts)
}

// Text is the table for a terminal.
func (c Comparison) Text() string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: suite %s, %d seeds per system\n", c.Names(), c.Suite, c.Seeds)
	head := []string{"system"}
	for _, s := range c.Systems {
		head = append(head, s.System)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range c.rows() {
		fmt.Fprintln(tw, strings.Join(append([]string{r.Label}, r.Cells...), "\t"))
	}
	_ = tw.Flush()
	if d := c.verdictsDiffer(); d != "" {
		fmt.Fprintln(&b, strings.ToUpper(d[:1])+d[1:])
	}
	return b.String()
}

// WriteJSON writes compare.json.
func (c Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// compareView is compare.html.
type compareView struct {
	C       Comparison
	Names   string
	Differ  string
	Systems []SystemFacts
	Rows    []compareRow
}

// WriteHTML writes compare.html.
func (c Comparison) WriteHTML(w io.Writer) error {
	return pages.ExecuteTemplate(w, "compare.html.tmpl", compareView{C: c, Names: c.Names(), Differ: c.verdictsDiffer(),
		Systems: c.Systems, Rows: c.rows()})
}
