package reports

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// DiffVersion is the format version of diff.json.
const DiffVersion = 1

// Classes of a seed in a diff, in the order a reader wants them.
const (
	// DiffNewlyFailing: fails now, and passed in the baseline or was not in
	// it. The only class that fails a diff by default.
	DiffNewlyFailing = "newly_failing"
	// DiffStillFailingOther: failed in both runs, found by other checkers.
	DiffStillFailingOther = "still_failing_other"
	// DiffStillFailingSame: failed in both runs, found by the same checkers.
	DiffStillFailingSame = "still_failing_same"
	DiffFixed            = "fixed"   // failed in the baseline, passes now
	DiffNewSeed          = "new"     // passes, and was not in the baseline
	DiffRemoved          = "removed" // in the baseline only
	DiffPassing          = "passing" // passes in both
)

// DiffClasses lists every class in display order.
var DiffClasses = []string{DiffNewlyFailing, DiffStillFailingOther, DiffStillFailingSame, DiffFixed, DiffNewSeed,
	DiffRemoved, DiffPassing}

// diffClassTitle is a class in words.
var diffClassTitle = map[string]string{
	DiffNewlyFailing:      "newly failing",
	DiffStillFailingOther: "still failing, other checker",
	DiffStillFailingSame:  "still failing, same checker",
	DiffFixed:             "fixed",
	DiffNewSeed:           "new seeds",
	DiffRemoved:           "removed",
	DiffPassing:           "passing in both",
}

// Diff is diff.json: every seed of two runs of one suite, classified.
type Diff struct {
	Version int      `json:"version"`
	Suite   string   `json:"suite"`
	Base    DiffSide `json:"base"`
	New     DiffSide `json:"new"`
	// Counts has every class, zero or not.
	Counts map[string]int `json:"counts"`
	// ChecksumChanged counts seeds in both runs with the same verdict and
	// another checksum: the engine or the harness changed under them. They
	// are counted, never failed.
	ChecksumChanged int        `json:"checksum_changed"`
	Seeds           []SeedDiff `json:"seeds"`
}

// DiffSide is one of the two runs.
type DiffSide struct {
	Dir     string `json:"dir"`
	Tool    string `json:"tool"`
	System  string `json:"system,omitempty"` // the system under test, as its summary names it
	Verdict string `json:"verdict"`
	Seeds   int    `json:"seeds"`
}

// SeedDiff is one seed in a diff.
type SeedDiff struct {
	Scenario        string   `json:"scenario"`
	Finding         string   `json:"finding,omitempty"`
	Seed            uint64   `json:"seed"`
	Class           string   `json:"class"`
	BaseVerdict     string   `json:"base_verdict,omitempty"` // "" when not in the baseline
	NewVerdict      string   `json:"new_verdict,omitempty"`  // "" when removed
	BaseCheckers    []string `json:"base_checkers,omitempty"`
	NewCheckers     []string `json:"new_checkers,omitempty"`
	BaseChecksum    string   `json:"base_checksum,omitempty"`
	NewChecksum     string   `json:"new_checksum,omitempty"`
	ChecksumChanged bool     `json:"checksum_changed,omitempty"`
	// Report is the new run's report of a failing seed, relative to where
	// the new summary's artifacts are read from.
	Report string `json:"report,omitempty"`
	Replay string `json:"replay,omitempty"`
}

// Failing reports whether the seed fails in the new run.
func (d SeedDiff) Failing() bool {
	return d.Class == DiffNewlyFailing || d.Class == DiffStillFailingOther || d.Class == DiffStillFailingSame
}

// CompareSummaries classifies every seed of base and next, two runs of the
// same suite (a baseline, say main, and a pull request). baseDir and newDir
// are only recorded.
func CompareSummaries(base, next *Summary, baseDir, newDir string) (*Diff, error) {
	if base == nil || next == nil {
		return nil, fmt.Errorf("compare summaries: a summary is missing")
	}
	if base.Suite != next.Suite {
		return nil, fmt.Errorf("compare summaries: the baseline ran suite %q and the new run suite %q; a diff compares two runs of one suite",
			base.Suite, next.Suite)
	}
	d := &Diff{Version: DiffVersion, Suite: next.Suite, Counts: map[string]int{},
		Base: DiffSide{Dir: baseDir, Tool: base.Tool, System: base.System, Verdict: base.Verdict, Seeds: len(base.Seeds)},
		New:  DiffSide{Dir: newDir, Tool: next.Tool, System: next.System, Verdict: next.Verdict, Seeds: len(next.Seeds)}}
	for _, c := range DiffClasses {
		d.Counts[c] = 0
	}
	before := make(map[seedKey]SeedResult, len(base.Seeds))
	for _, r := range base.Seeds {
		before[keyOf(r)] = r
	}
	seen := make(map[seedKey]bool, len(next.Seeds))
	for _, r := range next.Seeds {
		k := keyOf(r)
		if seen[k] {
			return nil, fmt.Errorf("compare summaries: the new run has %s seed %d%s twice", r.Scenario, r.Seed, findingSuffix(r.Finding))
		}
		seen[k] = true
		sd := SeedDiff{Scenario: r.Scenario, Finding: r.Finding, Seed: r.Seed, NewVerdict: r.Verdict,
			NewCheckers: checkersOf(r), NewChecksum: r.Checksum}
		if failing(r.Verdict) {
			sd.Report, sd.Replay = reportHref(r), r.Replay
		}
		old, inBase := before[k]
		if inBase {
			sd.BaseVerdict, sd.BaseCheckers, sd.BaseChecksum = old.Verdict, checkersOf(old), old.Checksum
		}
		switch was, is := inBase && failing(old.Verdict), failing(r.Verdict); {
		case is && !was:
			sd.Class = DiffNewlyFailing
		case is && slices.Equal(sd.BaseCheckers, sd.NewCheckers) && old.Verdict == r.Verdict:
			sd.Class = DiffStillFailingSame
		case is:
			sd.Class = DiffStillFailingOther
		case was:
			sd.Class = DiffFixed
		case !inBase:
			sd.Class = DiffNewSeed
		default:
			sd.Class = DiffPassing
		}
		if inBase && old.Verdict == r.Verdict && old.Checksum != r.Checksum {
			sd.ChecksumChanged = true
			d.ChecksumChanged++
		}
		d.Counts[sd.Class]++
		d.Seeds = append(d.Seeds, sd)
	}
	for _, r := range base.Seeds {
		if k := keyOf(r); !seen[k] {
			seen[k] = true
			d.Seeds = append(d.Seeds, SeedDiff{Scenario: r.Scenario, Finding: r.Finding, Seed: r.Seed, Class: DiffRemoved,
				BaseVerdict: r.Verdict, BaseCheckers: checkersOf(r), BaseChecksum: r.Checksum})
			d.Counts[DiffRemoved]++
		}
	}
	rank := map[string]int{}
	for i, c := range DiffClasses {
		rank[c] = i
	}
	sort.SliceStable(d.Seeds, func(i, j int) bool {
		a, b := d.Seeds[i], d.Seeds[j]
		if rank[a.Class] != rank[b.Class] {
			return rank[a.Class] < rank[b.Class]
		}
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Finding != b.Finding {
			return a.Finding < b.Finding
		}
		return a.Seed < b.Seed
	})
	return d, nil
}

// checkersOf names the checkers that fired on a seed, sorted and once each;
// a failing seed without violations (linearizability could not decide) is
// named by its linearizability outcome.
func checkersOf(r SeedResult) []string {
	var out []string
	for _, v := range r.Violations {
		if !slices.Contains(out, v.Checker) {
			out = append(out, v.Checker)
		}
	}
	if len(out) == 0 && failing(r.Verdict) && r.Linearizability != "" {
		out = append(out, "linearizability "+r.Linearizability)
	}
	slices.Sort(out)
	return out
}

// ExitCode is simrun report diff's exit code: 1 when a seed newly fails (or,
// with failOnAny, when any seed fails in the new run), else 0.
func (d *Diff) ExitCode(failOnAny bool) int {
	if d.Counts[DiffNewlyFailing] > 0 {
		return 1
	}
	if failOnAny && d.Counts[DiffStillFailingOther]+d.Counts[DiffStillFailingSame] > 0 {
		return 1
	}
	return 0
}

// maxDiffListed caps the seeds a text or Markdown summary lists by name.
const maxDiffListed = 10

// WriteText writes the short table a terminal or a CI log shows.
func (d *Diff) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: baseline %s (%d seeds) -> new %s (%d seeds)\n", d.Suite, d.Base.Verdict, d.Base.Seeds,
		d.New.Verdict, d.New.Seeds)
	for _, c := range DiffClasses {
		fmt.Fprintf(&b, "  %-30s %6d", diffClassTitle[c], d.Counts[c])
		if c == DiffPassing && d.ChecksumChanged > 0 {
			fmt.Fprintf(&b, "   (%d seeds kept their verdict under another checksum)", d.ChecksumChanged)
		}
		b.WriteByte('\n')
	}
	listed := 0
	for _, s := range d.Seeds {
		if s.Class != DiffNewlyFailing {
			continue
		}
		if listed == 0 {
			b.WriteString("newly failing:\n")
		}
		if listed == maxDiffListed {
			fmt.Fprintf(&b, "  ... and %d more (diff.json has them all)\n", d.Counts[DiffNewlyFailing]-maxDiffListed)
			break
		}
		listed++
		fmt.Fprintf(&b, "  %s seed %d%s: %s (%s)\n    %s\n", s.Scenario, s.Seed, findingSuffix(s.Finding), s.NewVerdict,
			strings.Join(s.NewCheckers, ", "), s.Replay)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the table for a GitHub job summary.
func (d *Diff) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	head := "nothing newly failing"
	if n := d.Counts[DiffNewlyFailing]; n > 0 {
		head = fmt.Sprintf("%d newly failing", n)
	}
	fmt.Fprintf(&b, "### dispatchsim %s: %s\n\n", mdText(d.Suite), head)
	fmt.Fprintf(&b, "Baseline %s (%d seeds), this run %s (%d seeds).\n\n", d.Base.Verdict, d.Base.Seeds, d.New.Verdict, d.New.Seeds)
	b.WriteString("| seeds | count |\n|---|---:|\n")
	for _, c := range DiffClasses {
		fmt.Fprintf(&b, "| %s | %d |\n", diffClassTitle[c], d.Counts[c])
	}
	fmt.Fprintf(&b, "| same verdict, other checksum | %d |\n", d.ChecksumChanged)
	listed := 0
	for _, s := range d.Seeds {
		if s.Class != DiffNewlyFailing {
			continue
		}
		if listed == 0 {
			b.WriteString("\n| newly failing | verdict | checkers | replay |\n|---|---|---|---|\n")
		}
		if listed == maxDiffListed {
			fmt.Fprintf(&b, "\n%d more in diff.json.\n", d.Counts[DiffNewlyFailing]-maxDiffListed)
			break
		}
		listed++
		fmt.Fprintf(&b, "| %s seed %d%s | %s | %s | `%s` |\n", mdText(s.Scenario), s.Seed, mdText(findingSuffix(s.Finding)),
			s.NewVerdict, mdText(strings.Join(s.NewCheckers, ", ")), strings.ReplaceAll(s.Replay, "`", "'"))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// mdText keeps a value from breaking a Markdown table row.
func mdText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// diffView is diff.html.
type diffView struct {
	D        *Diff
	Headline string
	Bad      bool
	Counts   []Option
	Groups   []diffGroup
}

type diffGroup struct {
	Class, Title string
	Seeds        []SeedDiff
	Cut          int
}

// maxDiffRows caps the rows listed per class on the page; diff.json has all.
const maxDiffRows = 300

// WriteHTML writes diff.html: the counts, then each class's seeds. Seeds that
// pass in both runs are listed only when their checksum changed.
func (d *Diff) WriteHTML(w io.Writer) error {
	v := diffView{D: d, Headline: "nothing newly failing"}
	if n := d.Counts[DiffNewlyFailing]; n > 0 {
		v.Headline, v.Bad = fmt.Sprintf("%d newly failing", n), true
	}
	for _, c := range DiffClasses {
		v.Counts = append(v.Counts, Option{diffClassTitle[c], fmt.Sprint(d.Counts[c])})
	}
	v.Counts = append(v.Counts, Option{"same verdict, other checksum", fmt.Sprint(d.ChecksumChanged)})
	for _, c := range DiffClasses {
		g := diffGroup{Class: c, Title: diffClassTitle[c]}
		for _, s := range d.Seeds {
			if s.Class != c || (c == DiffPassing && !s.ChecksumChanged) {
				continue
			}
			if len(g.Seeds) == maxDiffRows {
				g.Cut++
				continue
			}
			g.Seeds = append(g.Seeds, s)
		}
		if c == DiffPassing {
			g.Title = "passing in both, with another checksum"
		}
		if len(g.Seeds) > 0 {
			v.Groups = append(v.Groups, g)
		}
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "diff.html.tmpl", v); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
