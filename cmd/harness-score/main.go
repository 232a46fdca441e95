// Command harness-score measures how many of a mutation tool's mutants of
// the harness's own judges (checker/, model/, and the fault matching of
// faults/) those packages' own tests kill. Each argument names a package and
// the gremlins dry-run report that lists its mutants:
//
//	harness-score -j 2 checker=checker.json model=model.json faults=faults.json
//
// It writes every mutant with its status, and a line per package, to --out
// (mutants/harness-score.json); docs/mutation-score.md shows the whole
// procedure.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/mutants"
)

// packageScore is one package's line of the score.
type packageScore struct {
	Package    string  `json:"package"`
	Listed     int     `json:"listed"`
	NotCovered int     `json:"not_covered"`
	Killed     int     `json:"killed"`
	Survived   int     `json:"survived"`
	Equivalent int     `json:"equivalent"`
	NotViable  int     `json:"not_viable"`
	TimedOut   int     `json:"timed_out"`
	Score      float64 `json:"score"` // killed / (killed + survived), in percent
	Seconds    float64 `json:"seconds"`
}

type scoreFile struct {
	Tool     string           `json:"tool"`
	Command  string           `json:"command"`
	Packages []packageScore   `json:"packages"`
	Mutants  []mutants.Judged `json:"mutants"`
}

func main() {
	root := flag.String("root", ".", "the module root")
	jobs := flag.Int("j", 2, "mutants judged at a time")
	out := flag.String("out", "mutants/harness-score.json", "where the score goes")
	triage := flag.String("equivalent", "mutants/harness-equivalent.txt", "the triage file of equivalent mutants")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: harness-score [-j n] [-out file] package=gremlins-dry-run.json ...")
		os.Exit(2)
	}
	equivalent, err := mutants.ReadEquivalent(*triage)
	if err != nil {
		fail(err)
	}
	res := scoreFile{Tool: mutants.Gremlins + ", judged by each package's own tests",
		Command: "harness-score " + strings.Join(os.Args[1:], " ")}
	for _, arg := range flag.Args() {
		pkg, report, ok := strings.Cut(arg, "=")
		if !ok {
			fail(fmt.Errorf("%q: want package=report.json", arg))
		}
		gs, err := mutants.ReadGremlinsOf(report, *root, pkg)
		if err != nil {
			fail(err)
		}
		start := time.Now() // determinism-ok: the wall time the score reports
		judged, err := mutants.JudgeByOwnTests(*root, pkg, gs, *jobs, os.Stderr)
		if err != nil {
			fail(err)
		}
		line := packageScore{Package: pkg, Listed: len(judged), Seconds: time.Since(start).Round(time.Second).Seconds()} // determinism-ok: as above
		for i, j := range judged {
			if why, ok := equivalent[j.Site]; ok && j.Status == mutants.HarnessSurvived {
				judged[i].Status, judged[i].Reason = mutants.HarnessEquivalent, why
			}
			switch judged[i].Status {
			case mutants.HarnessNotCovered:
				line.NotCovered++
			case mutants.HarnessKilled:
				line.Killed++
			case mutants.HarnessSurvived:
				line.Survived++
			case mutants.HarnessEquivalent:
				line.Equivalent++
			case mutants.HarnessNotViable:
				line.NotViable++
			case mutants.HarnessTimedOut:
				line.TimedOut++
			}
		}
		if n := line.Killed + line.Survived; n > 0 {
			line.Score = float64(int(1000*float64(line.Killed)/float64(n)+0.5)) / 10
		}
		fmt.Fprintf(os.Stderr, "%s: %d listed, %d not covered, %d killed, %d survived, %d equivalent, %d not viable, %d timed out: %.1f %% in %.0fs\n",
			pkg, line.Listed, line.NotCovered, line.Killed, line.Survived, line.Equivalent, line.NotViable, line.TimedOut, line.Score, line.Seconds)
		res.Packages = append(res.Packages, line)
		res.Mutants = append(res.Mutants, judged...)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "harness-score:", err)
	os.Exit(1)
}
