package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"
)

// junitSuite is a JUnit <testsuite>, the subset CI systems read.
type junitSuite struct {
	XMLName    xml.Name        `xml:"testsuite"`
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the summary as JUnit XML, the way CI systems list tests:
// one testcase per failing seed (named scenario/seed, the first violation as
// its message, every violation and the replay line as its body) and one per
// case for the rest of its seeds, which fails only for what belongs to the
// case as a whole (a declared fault kind that never fired, seeds not run).
// Times add up: a failing seed's wall time is its own testcase's.
func WriteJUnit(w io.Writer, s *Summary) error {
	js := junitSuite{Name: s.Suite, Time: seconds(s.WallSeconds), Properties: []junitProperty{
		{"tool", s.Tool}, {"verdict", s.Verdict}, {"summary_version", fmt.Sprint(s.Version)},
		{"commit", s.Provenance.Commit}, {"dirty", fmt.Sprint(s.Provenance.Dirty)},
		{"go_version", s.Provenance.GoVersion}, {"simrun_version", s.Provenance.Version},
		{"seeds_planned", fmt.Sprint(s.Planned)}, {"seeds_not_run", fmt.Sprint(s.NotRun)}}}
	if s.Shard != "" {
		js.Properties = append(js.Properties, junitProperty{"shard", s.Shard})
	}
	if s.Stopped != "" {
		js.Properties = append(js.Properties, junitProperty{"stopped", s.Stopped})
	}
	bySeed := map[seedKey]SeedResult{}
	for _, r := range s.Seeds {
		bySeed[keyOf(r)] = r
	}
	class := "dispatchsim." + s.Suite
	for _, c := range s.Cases {
		jc := junitCase{Name: CaseName(c.CaseSpec), Classname: class}
		wall := 0.0
		var ran int
		for _, seed := range c.Seeds {
			r, ok := bySeed[seedKey{c.Scenario, c.Finding, seed}]
			if !ok {
				continue
			}
			ran++
			if !failing(r.Verdict) {
				wall += r.WallSeconds
				continue
			}
			js.Cases = append(js.Cases, seedCase(class, r))
			js.Failures++
		}
		jc.Time = seconds(wall)
		switch {
		case len(c.NeverFired) > 0 || len(c.NotRun) > 0:
			jc.Failure = &junitFailure{Message: caseFailureMessage(c), Type: caseFailureType(c), Body: caseFailureBody(c)}
			js.Failures++
		case ran == 0 && len(c.Seeds) > 0:
			jc.Skipped = &junitSkipped{Message: "no seed of this case ran in this shard"}
			js.Skipped++
		case len(c.Missing) > 0:
			jc.SystemOut = fmt.Sprintf("%d of %d seeds ran here; fault coverage is judged after the merge", ran, len(c.Seeds))
		}
		if len(c.Failed) > 0 && jc.SystemOut == "" {
			jc.SystemOut = fmt.Sprintf("%d failing seeds are test cases of their own", len(c.Failed))
		}
		js.Cases = append(js.Cases, jc)
	}
	for _, na := range s.NotApplicable {
		js.Cases = append(js.Cases, junitCase{Name: na.Case, Classname: class, Time: seconds(0),
			Skipped: &junitSkipped{Message: "not applicable: " + na.Reason}})
		js.Skipped++
	}
	js.Tests = len(js.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(js); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// SeedTestName names a seed as CI lists it: "scenario/seed", or
// "regression/finding/seed" for a pinned seed.
func SeedTestName(r SeedResult) string {
	if r.Finding != "" {
		return fmt.Sprintf("regression/%s/%d", r.Finding, r.Seed)
	}
	return fmt.Sprintf("%s/%d", r.Scenario, r.Seed)
}

func seedCase(class string, r SeedResult) junitCase {
	msg := fmt.Sprintf("%s: linearizability %s", r.Verdict, r.Linearizability)
	if v, ok := FirstFinding(r.Violations); ok {
		msg = fmt.Sprintf("%s/%s: %s", v.Layer, v.Checker, v.Message)
	}
	return junitCase{Name: SeedTestName(r), Classname: class, Time: seconds(r.WallSeconds),
		Failure: &junitFailure{Message: msg, Type: r.Verdict, Body: seedFailureBody(r)}}
}

func seedFailureBody(r SeedResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed %d: %s (linearizability %s, checksum %s)\n", r.Scenario, r.Seed, r.Verdict,
		r.Linearizability, r.Checksum)
	for _, v := range ReadingOrder(r.Violations) {
		job := v.Job
		if job == "" {
			job = "-"
		}
		fmt.Fprintf(&b, "  %s/%s job=%s step=%d: %s\n", v.Layer, v.Checker, job, v.Step, v.Message)
	}
	if r.Artifacts != "" {
		fmt.Fprintf(&b, "report: %s\n", path.Join(r.Artifacts, "report.html"))
	}
	if r.Replay != "" {
		fmt.Fprintf(&b, "replay: %s\n", r.Replay)
	}
	return b.String()
}

// CaseName is a case's test name: "<scenario> seeds <first>..<last>", or
// "regression/<finding> seed N" for a pinned seed.
func CaseName(c CaseSpec) string {
	switch {
	case c.Finding != "" && len(c.Seeds) == 1:
		return fmt.Sprintf("regression/%s seed %d", c.Finding, c.Seeds[0])
	case c.Finding != "":
		return fmt.Sprintf("regression/%s %s", c.Finding, seedSpan(c.Seeds))
	}
	return c.Scenario + " " + seedSpan(c.Seeds)
}

func seedSpan(seeds []uint64) string {
	switch len(seeds) {
	case 0:
		return "(no seeds)"
	case 1:
		return fmt.Sprintf("seed %d", seeds[0])
	}
	return fmt.Sprintf("seeds %d..%d", seeds[0], seeds[len(seeds)-1])
}

func caseFailureType(c CaseResult) string {
	if len(c.NeverFired) > 0 {
		return VerdictSafety
	}
	return VerdictIncomplete
}

func caseFailureMessage(c CaseResult) string {
	var parts []string
	if len(c.NeverFired) > 0 {
		parts = append(parts, "never fired: "+strings.Join(c.NeverFired, ", "))
	}
	if n := len(c.NotRun); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d seeds not run", n, len(c.Seeds)))
	}
	return strings.Join(parts, "; ")
}

func caseFailureBody(c CaseResult) string {
	var b strings.Builder
	for _, k := range c.NeverFired {
		if checker, ok := strings.CutPrefix(k, "expected violation "); ok {
			fmt.Fprintf(&b, "%s: the expected violation %s was found on none of %d seeds\n", c.Scenario, checker, len(c.Seeds))
			continue
		}
		fmt.Fprintf(&b, "%s: declared %s never fired over %d seeds\n", c.Scenario, k, len(c.Seeds))
	}
	if len(c.NotRun) > 0 {
		fmt.Fprintf(&b, "%s: seeds %s did not run (budget, interrupt, a dead worker or a missing shard)\n",
			c.Scenario, seedSpan(c.NotRun))
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
