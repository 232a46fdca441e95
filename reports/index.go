package reports

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"sort"
)

// maxIndexFailures caps the failing seeds listed in full on the index page.
const maxIndexFailures = 200

// indexView is the suite index page.
type indexView struct {
	S        *Summary
	Totals   []Option
	Cases    []indexCase
	Fired    []coverageRow
	Branches []coverageRow
	Slowest  []seedRow
	Failures []seedRow
	FailCut  int
	Groups   []FailureGroup
	ExitCode int
	Charts   chartsView
}

type indexCase struct {
	Name, Scenario, Verdict string
	Seeds, Ran              int
	Failed                  []seedLink
	Environment             []seedLink // seeds the environment's broken contract explains
	NeverFired              []string
	Missing, NotRun         int
	Fired                   int
}

type seedLink struct {
	Seed    uint64
	Href    string
	Verdict string
}

type coverageRow struct {
	Name     string
	Count    int
	Declared bool // some case declares this kind
}

type seedRow struct {
	SeedResult
	Href  string
	Shown []Violation // the first few violations
	More  int
}

// maxIndexViolations caps the violations listed per failing seed; its report
// and summary.json have them all.
const maxIndexViolations = 5

func newSeedRow(r SeedResult) seedRow {
	row := seedRow{SeedResult: r, Href: reportHref(r), Shown: ReadingOrder(r.Violations)}
	if len(row.Shown) > maxIndexViolations {
		row.More = len(row.Shown) - maxIndexViolations
		row.Shown = row.Shown[:maxIndexViolations]
	}
	return row
}

// WriteIndex writes the suite's index page: the verdict, every case, the fault
// coverage, the slowest seeds, and links to each failing seed's report.
func WriteIndex(w io.Writer, s *Summary) error {
	v := indexView{S: s, ExitCode: s.ExitCode(), Groups: s.Groups, Charts: buildCharts(s)}
	bySeed := map[seedKey]SeedResult{}
	failedSeeds, missing := 0, 0
	for _, r := range s.Seeds {
		bySeed[keyOf(r)] = r
		if failing(r.Verdict) {
			failedSeeds++
			if len(v.Failures) < maxIndexFailures {
				v.Failures = append(v.Failures, newSeedRow(r))
			} else {
				v.FailCut++
			}
		}
	}
	declared := map[string]bool{}
	passed := 0
	for _, c := range s.Cases {
		ic := indexCase{Name: CaseName(c.CaseSpec), Scenario: c.Scenario, Verdict: c.Verdict, Seeds: len(c.Seeds),
			NeverFired: c.NeverFired, Missing: len(c.Missing), NotRun: len(c.NotRun)}
		ic.Ran = ic.Seeds - ic.Missing
		for _, n := range c.Fired {
			ic.Fired += n
		}
		for _, seed := range c.Failed {
			r := bySeed[seedKey{c.Scenario, c.Finding, seed}]
			ic.Failed = append(ic.Failed, seedLink{Seed: seed, Href: reportHref(r), Verdict: r.Verdict})
		}
		for _, seed := range c.Environment {
			r := bySeed[seedKey{c.Scenario, c.Finding, seed}]
			ic.Environment = append(ic.Environment, seedLink{Seed: seed, Href: reportHref(r), Verdict: r.Verdict})
		}
		for _, k := range c.Declared {
			declared[k] = true
		}
		if c.Passed {
			passed++
		}
		missing += ic.Missing
		v.Cases = append(v.Cases, ic)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Coverage.Fired)) {
		v.Fired = append(v.Fired, coverageRow{Name: k, Count: s.Coverage.Fired[k], Declared: declared[k]})
	}
	for k := range declared {
		if _, ok := s.Coverage.Fired[k]; !ok {
			v.Fired = append(v.Fired, coverageRow{Name: k, Declared: true})
		}
	}
	sort.SliceStable(v.Fired, func(i, j int) bool { return v.Fired[i].Name < v.Fired[j].Name })
	for _, k := range slices.Sorted(maps.Keys(s.Coverage.Branches)) {
		v.Branches = append(v.Branches, coverageRow{Name: k, Count: s.Coverage.Branches[k]})
	}

	slow := append([]SeedResult(nil), s.Seeds...)
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].WallSeconds > slow[j].WallSeconds })
	for _, r := range slow[:min(10, len(slow))] {
		v.Slowest = append(v.Slowest, newSeedRow(r))
	}

	wall, check := 0.0, 0.0
	for _, r := range s.Seeds {
		wall += r.WallSeconds
		check += r.CheckSeconds
	}
	v.Totals = []Option{
		{"cases", fmt.Sprintf("%d (%d passed)", len(s.Cases), passed)},
		{"seeds run", fmt.Sprintf("%d of %d planned", len(s.Seeds), s.Planned)},
		{"seeds failed", fmt.Sprint(failedSeeds)},
		{"wall", fmt.Sprintf("%.1fs", s.WallSeconds)},
		{"seed time", fmt.Sprintf("%.1fs (checking %.1fs)", wall, check)},
		{"exit code", fmt.Sprint(v.ExitCode)},
	}
	if len(s.NotApplicable) > 0 {
		v.Totals = append(v.Totals, Option{"cases not applicable", fmt.Sprintf("%d (listed with why under Cases)", len(s.NotApplicable))})
	}
	if s.NotRun > 0 {
		v.Totals = append(v.Totals, Option{"seeds not run", fmt.Sprint(s.NotRun)})
	}
	if s.Stopped != "" {
		v.Totals = append(v.Totals, Option{"stopped", s.Stopped})
	}
	if other := missing - s.NotRun; other > 0 {
		v.Totals = append(v.Totals, Option{"seeds in other shards", fmt.Sprint(other)})
	}
	v.Totals = append(v.Totals, Option{"build", s.Provenance.String()})
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "index.html.tmpl", v); err != nil {
		return fmt.Errorf("render index: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// reportHref links a failing seed's report, relative to the index.
func reportHref(r SeedResult) string {
	if r.Artifacts == "" {
		return ""
	}
	return path.Join(r.Artifacts, "report.html")
}
