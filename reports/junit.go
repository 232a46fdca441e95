package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/dispatchsim/dispatchsim/scenarios"
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

// WriteJUnit writes the summary as JUnit XML: one testcase per case. A failing
// case's failure lists each failed seed's violations, each seed ending with
// the line that replays it, and the declared fault kinds that never fired.
func WriteJUnit(w io.Writer, s *Summary) error {
	js := junitSuite{Name: s.Suite, Time: seconds(s.WallSeconds), Properties: []junitProperty{
		{"tool", s.Tool}, {"verdict", s.Verdict}, {"summary_version", fmt.Sprint(s.Version)}}}
	if s.Shard != "" {
		js.Properties = append(js.Properties, junitProperty{"shard", s.Shard})
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
			if r, ok := bySeed[seedKey{c.Scenario, c.Finding, seed}]; ok {
				wall += r.WallSeconds
				ran++
			}
		}
		jc.Time = seconds(wall)
		switch {
		case !c.Passed:
			jc.Failure = &junitFailure{Message: failureMessage(c), Type: c.Verdict, Body: failureBody(c, bySeed)}
			js.Failures++
		case ran == 0 && len(c.Seeds) > 0:
			jc.Skipped = &junitSkipped{Message: "no seed of this case ran in this shard"}
			js.Skipped++
		case len(c.Missing) > 0:
			jc.SystemOut = fmt.Sprintf("%d of %d seeds ran here; fault coverage is judged after the merge", ran, len(c.Seeds))
		}
		js.Cases = append(js.Cases, jc)
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

func failureMessage(c CaseResult) string {
	var parts []string
	if n := len(c.Failed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d seeds failed (%s)", n, len(c.Seeds), c.Verdict))
	}
	if len(c.NeverFired) > 0 {
		parts = append(parts, "never fired: "+strings.Join(c.NeverFired, ", "))
	}
	return strings.Join(parts, "; ")
}

func failureBody(c CaseResult, bySeed map[seedKey]SeedResult) string {
	var b strings.Builder
	for _, seed := range c.Failed {
		r := bySeed[seedKey{c.Scenario, c.Finding, seed}]
		fmt.Fprintf(&b, "%s seed %d: %s (linearizability %s)\n", c.Scenario, seed, r.Verdict, r.Linearizability)
		for _, v := range r.Violations {
			job := v.Job
			if job == "" {
				job = "-"
			}
			fmt.Fprintf(&b, "  %s/%s job=%s step=%d: %s\n", v.Layer, v.Checker, job, v.Step, v.Message)
		}
		if r.Artifacts != "" {
			fmt.Fprintf(&b, "  report: %s\n", path.Join(r.Artifacts, "report.html"))
		}
		replay := r.Replay
		if replay == "" {
			replay = scenarios.ReplayLine(c.Scenario, seed)
		}
		fmt.Fprintf(&b, "  replay: %s\n", replay)
	}
	for _, k := range c.NeverFired {
		if checker, ok := strings.CutPrefix(k, "expected violation "); ok {
			fmt.Fprintf(&b, "%s: the expected violation %s was found on none of %d seeds\n", c.Scenario, checker, len(c.Seeds))
			continue
		}
		fmt.Fprintf(&b, "%s: declared %s never fired over %d seeds\n", c.Scenario, k, len(c.Seeds))
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
