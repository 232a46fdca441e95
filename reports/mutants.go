package reports

import (
	"fmt"
	"io"
	"math"
	"slices"

	"golang.org/x/exp/stats"
)

// Mutant statuses.
const (
	MutantKilled     = "killed"
	MutantSurvived   = "survived"
	MutantNotReached = "not reached" // no seed executed the mutated line
	MutantTimedOut   = "timed out"
	MutantEquivalent = "equivalent" // triaged by a person: no run can tell it from the engine
	MutantNotViable  = "not viable" // does not compile
	MutantNotRun     = "not run"    // a budget ran out before it started
)

// MutantKill is one run of the suite against a mutant: from one seed offset,
// until its first failing seed or the end of the suite.
type MutantKill struct {
	Offset  uint64 `json:"offset"`
	Killed  bool   `json:"killed"`
	Checker string `json:"checker,omitempty"` // the killing seed's first violation
	Named   bool   `json:"named"`             // the kill came from a checker the mutant names
	Case    string `json:"case,omitempty"`    // scenario (or regression finding) of the killing seed
	Seed    uint64 `json:"seed,omitempty"`
	// Seeds is the seeds run up to the kill, the killing seed included;
	// SeedsRun all the seeds run (more, without --fail-fast).
	Seeds     int     `json:"seeds"`
	SeedsRun  int     `json:"seeds_run"`
	KillSeeds int     `json:"-"`
	Seconds   float64 `json:"seconds"`
}

// MutantResult is one mutant's verdict.
type MutantResult struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind"` // catalog, or the tool that made it
	Origin      string   `json:"origin,omitempty"`
	Description string   `json:"description,omitempty"`
	Expected    []string `json:"expected_checkers,omitempty"`
	Status      string   `json:"status"`
	// Reason says why a mutant is not a plain kill or survival (a build
	// error, an equivalence triage).
	Reason string       `json:"reason,omitempty"`
	Runs   []MutantKill `json:"runs,omitempty"`
	// First run's figures, and across the offsets (killed runs only).
	Checker       string  `json:"checker,omitempty"`
	Named         bool    `json:"named"`
	SeedsToKill   int     `json:"seeds_to_kill,omitempty"`
	SecondsToKill float64 `json:"seconds_to_kill,omitempty"`
	MedianSeeds   float64 `json:"median_seeds,omitempty"`
	P90Seeds      float64 `json:"p90_seeds,omitempty"`
	MedianSeconds float64 `json:"median_seconds,omitempty"`
	P90Seconds    float64 `json:"p90_seconds,omitempty"`
	BuildSeconds  float64 `json:"build_seconds"`
	// Hunts are the explore campaigns against the mutant, one per search
	// mode (mutants --hunt), in the summary's HuntModes order.
	Hunts []HuntMode `json:"hunts,omitempty"`
}

// Hunt is one explore campaign against a mutant from one first seed: it
// runs until a checker the mutant names fires, or its budget is spent.
type Hunt struct {
	From    uint64 `json:"from"`
	Killed  bool   `json:"killed"`
	Checker string `json:"checker,omitempty"`
	// Key replays the killing run: its seed, and branch if it was one.
	Key string `json:"key,omitempty"`
	// Runs counts seeds and branches up to the kill (all of them when it
	// survived); Seconds sums their run times, the CPU the search cost.
	Runs    int     `json:"runs"`
	Seconds float64 `json:"run_seconds"`
	Error   string  `json:"error,omitempty"`
}

// HuntMode is a search mode's hunts against one mutant, from each first seed.
type HuntMode struct {
	Mode  string `json:"mode"`
	Hunts []Hunt `json:"hunts"`
	Kills int    `json:"kills"`
	// Errors count hunts that could not run: not survivals, not kills.
	Errors int `json:"errors,omitempty"`
	// The medians count a hunt that did not kill as longer than any that
	// did: with half or more of them unkilled there is no median (Median
	// false).
	Median        bool    `json:"median_killed"`
	MedianRuns    float64 `json:"median_runs,omitempty"`
	MedianSeconds float64 `json:"median_run_seconds,omitempty"`
}

// Summarize counts the kills and takes the medians.
func (h *HuntMode) Summarize() {
	h.Kills, h.Errors = 0, 0
	var runs, secs []float64
	for _, x := range h.Hunts {
		if x.Error != "" {
			h.Errors++
		}
		r, s := math.Inf(1), math.Inf(1)
		if x.Killed {
			h.Kills++
			r, s = float64(x.Runs), x.Seconds
		}
		runs, secs = append(runs, r), append(secs, s)
	}
	h.MedianRuns, h.MedianSeconds = median(runs), median(secs)
	h.Median = len(h.Hunts) > 0 && !math.IsInf(h.MedianRuns, 1) && !math.IsInf(h.MedianSeconds, 1)
	if !h.Median {
		h.MedianRuns, h.MedianSeconds = 0, 0
	}
}

// median of xs, +Inf among them sorting last; +Inf if a middle one is.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.Inf(1)
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Summarize fills the status and the kill figures from the runs: killed when
// the first run killed it; the quantiles are over the runs that killed.
func (m *MutantResult) Summarize() {
	if len(m.Runs) == 0 {
		return
	}
	first := m.Runs[0]
	m.Status = MutantSurvived
	if first.Killed {
		m.Status = MutantKilled
		m.Checker, m.Named, m.SeedsToKill, m.SecondsToKill = first.Checker, first.Named, first.Seeds, first.Seconds
	}
	var seeds, secs []float64
	for _, r := range m.Runs {
		if r.Killed {
			seeds = append(seeds, float64(r.Seeds))
			secs = append(secs, r.Seconds)
		}
	}
	if len(seeds) > 0 {
		q := stats.Quantiles(seeds, 0.5, 0.9)
		m.MedianSeeds, m.P90Seeds = q[0], q[1]
		q = stats.Quantiles(secs, 0.5, 0.9)
		m.MedianSeconds, m.P90Seconds = q[0], q[1]
	}
}

// MutantsSummary is a mutants run: the kill table and the score.
type MutantsSummary struct {
	Tool       string     `json:"tool"`
	Provenance Provenance `json:"provenance"`
	Date       string     `json:"date"`
	Command    string     `json:"command"`
	Suite      string     `json:"suite"`
	System     string     `json:"system,omitempty"` // the system whose engine the mutants change, which the suite ran against
	Jobs       int        `json:"jobs"`
	Offsets    []uint64   `json:"offsets"`
	// HuntModes name the search modes each mutant was hunted with, and
	// HuntBudget bounds one hunt (mutants --hunt).
	HuntModes    []string       `json:"hunt_modes,omitempty"`
	HuntBudget   float64        `json:"hunt_budget_seconds,omitempty"`
	HuntScenario string         `json:"hunt_scenario,omitempty"`
	Mutants      []MutantResult `json:"mutants"`
	Counts       map[string]int `json:"counts"`
	// Score is killed / (killed + survived); the other statuses are beside it.
	Score       float64 `json:"score"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Deep is the kind of a defect that needs two rare events in a row: the
// suite is not expected to kill it, so it stays out of the counts and score.
const Deep = "deep"

// Tally counts the statuses and computes the score.
func (s *MutantsSummary) Tally() {
	s.Counts = map[string]int{}
	for _, m := range s.Mutants {
		if m.Kind != Deep {
			s.Counts[m.Status]++
		}
	}
	if n := s.Counts[MutantKilled] + s.Counts[MutantSurvived]; n > 0 {
		s.Score = float64(s.Counts[MutantKilled]) / float64(n)
	}
}

// Survivors are the catalog mutants that were not killed, but for those
// shown equivalent.
func (s *MutantsSummary) Survivors() []string {
	var out []string
	for _, m := range s.Mutants {
		if m.Kind == "catalog" && m.Status != MutantKilled && m.Status != MutantEquivalent {
			out = append(out, m.Name)
		}
	}
	return out
}

type mutantsView struct {
	S        *MutantsSummary
	Statuses []statusCount
	Mutants  []MutantResult
	Hunts    []huntRow
}

// huntRow is a mutant's line in the search-mode table: a cell per mode.
type huntRow struct {
	Name, Kind string
	Cells      []huntCell
}

type huntCell struct {
	HuntMode
	// Ratio is the first mode's median CPU over this one's ("3.8x"), when
	// both have a median.
	Ratio string
}

// huntRows lays the hunts out by the summary's mode order; the first mode is
// the baseline the ratios divide.
func (s *MutantsSummary) huntRows() []huntRow {
	var rows []huntRow
	for _, m := range s.Mutants {
		if len(m.Hunts) == 0 {
			continue
		}
		row := huntRow{Name: m.Name, Kind: m.Kind}
		for i, h := range m.Hunts {
			c := huntCell{HuntMode: h}
			if base := m.Hunts[0]; i > 0 && base.Median && h.Median && h.MedianSeconds > 0 {
				c.Ratio = fmt.Sprintf("%.1fx", base.MedianSeconds/h.MedianSeconds)
			}
			row.Cells = append(row.Cells, c)
		}
		rows = append(rows, row)
	}
	return rows
}

type statusCount struct {
	Status string
	Count  int
}

// WriteMutantsHTML writes the kill table as one self-contained page.
func WriteMutantsHTML(w io.Writer, s *MutantsSummary) error {
	v := mutantsView{S: s, Mutants: s.Mutants}
	for _, st := range []string{MutantKilled, MutantSurvived, MutantNotReached, MutantTimedOut, MutantEquivalent, MutantNotViable, MutantNotRun} {
		if n := s.Counts[st]; n > 0 {
			v.Statuses = append(v.Statuses, statusCount{st, n})
		}
	}
	v.Mutants = slices.Clone(s.Mutants)
	v.Hunts = s.huntRows()
	return pages.ExecuteTemplate(w, "mutants.html.tmpl", v)
}
