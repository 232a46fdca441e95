package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/dispatchsim/dispatchsim/checker"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/exp/stats"

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
}

// SystemFacts is one system's column.
type SystemFacts struct {
	System      string         `json:"system"`
	FailedSeeds int            `json:"seeds_with_violations"`
	Violations  map[string]int `json:"violations"` // by checker
	// DuplicateExecutions counts executions of a (job, generation) beyond its first.
	DuplicateExecutions int `json:"duplicate_executions"`
	// BlindJobs ended TIMEOUT without their dispatch ever stored by the broker;
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

// NewComparison puts the systems' columns side by side.
func NewComparison(suite string, seeds int, systems []SystemFacts) Comparison {
	c := Comparison{Suite: suite, Seeds: seeds, Systems: systems}
	set := map[string]bool{}
	for _, s := range systems {
		for k := range s.Violations {
			set[k] = true
		}
	}
	for k := range set {
		c.Checkers = append(c.Checkers, k)
	}
	sort.Strings(c.Checkers)
	return c
}

// rows is the table as text cells: a label column, then one per system.
func (c Comparison) rows() [][]string {
	row := func(label string, cell func(s SystemFacts) string) []string {
		out := []string{label}
		for _, s := range c.Systems {
			out = append(out, cell(s))
		}
		return out
	}
	secs := func(f float64) string { return fmt.Sprintf("%.2fs", f) }
	out := [][]string{row("system", func(s SystemFacts) string { return s.System }),
		row("seeds with violations (expected included)", func(s SystemFacts) string { return fmt.Sprintf("%d of %d", s.FailedSeeds, c.Seeds) })}
	for _, k := range c.Checkers {
		out = append(out, row("violations: "+k, func(s SystemFacts) string { return fmt.Sprint(s.Violations[k]) }))
	}
	return append(out,
		row("duplicate executions", func(s SystemFacts) string { return fmt.Sprint(s.DuplicateExecutions) }),
		row("TIMEOUT never published", func(s SystemFacts) string { return fmt.Sprint(s.BlindJobs) }),
		row("blind window mean / max", func(s SystemFacts) string {
			return secs(s.BlindWindowMeanSeconds) + " / " + secs(s.BlindWindowMaxSeconds)
		}),
		row("submit→first execution p50", func(s SystemFacts) string { return secs(s.LatencyP50Seconds) }),
		row("submit→first execution p90", func(s SystemFacts) string { return secs(s.LatencyP90Seconds) }),
		row("submit→first execution p99", func(s SystemFacts) string { return secs(s.LatencyP99Seconds) }),
		row("store commands per job", func(s SystemFacts) string { return fmt.Sprintf("%.1f", s.CommandsPerJob) }),
		row("scripts per job", func(s SystemFacts) string { return fmt.Sprintf("%.1f", s.ScriptsPerJob) }),
		row("seeds/s", func(s SystemFacts) string { return fmt.Sprintf("%.1f", s.SeedsPerSecond) }))
}

// Text is the table for a terminal.
func (c Comparison) Text() string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "suite %s, %d seeds per system\n", c.Suite, c.Seeds)
	for _, r := range c.rows() {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
	return b.String()
}

// WriteJSON writes compare.json.
func (c Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteHTML writes compare.html.
func (c Comparison) WriteHTML(w io.Writer) error {
	rows := c.rows()
	return pages.ExecuteTemplate(w, "compare.html.tmpl", struct {
		Suite string
		Seeds int
		Head  []string
		Rows  [][]string
	}{c.Suite, c.Seeds, rows[0], rows[1:]})
}
