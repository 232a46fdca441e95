package simrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/reports"
)

// huntStride separates a hunt's first seeds: an explore campaign's day of
// seeds, so hunts from different starts never meet the same seed.
const huntStride = exploreSeedsPerDay

// huntMode is one way of searching for a mutant's first kill: independent
// seeds, branching from rare moments, or independent seeds under another
// scheduling strategy.
type huntMode struct {
	name     string
	branches int
	strategy string
}

// parseHuntModes reads --hunt: seeds, branch, or a --strategy value (pct,
// pct:D, swarm), comma-separated.
func parseHuntModes(s string, branches int) ([]huntMode, error) {
	var out []huntMode
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		m := huntMode{name: name}
		switch name {
		case "seeds":
		case "branch":
			m.branches = branches
		default:
			if _, err := parseVariant("", name); err != nil || name == "" || name == "uniform" {
				return nil, fmt.Errorf("mode %q: want seeds, branch, or a strategy (pct, pct:D, swarm)", name)
			}
			m.strategy = name
		}
		if seen[name] {
			return nil, fmt.Errorf("mode %q twice", name)
		}
		seen[name] = true
		out = append(out, m)
	}
	return out, nil
}

// huntFlags bound the hunts of a mutants run.
type huntFlags struct {
	scenario string
	modes    []huntMode
	budget   time.Duration
	starts   int
	from     uint64
	branches int
}

// huntMutant runs each mode's campaigns with the mutant's simrun binary.
func huntMutant(bin, dir string, catches []string, h huntFlags) []reports.HuntMode {
	var out []reports.HuntMode
	for _, m := range h.modes {
		hm := reports.HuntMode{Mode: m.name}
		for k := range h.starts {
			from := h.from + uint64(k)*huntStride
			hm.Hunts = append(hm.Hunts, hunt(bin, filepath.Join(dir, fmt.Sprintf("hunt-%s-%d", m.name, k)), m, from,
				catches, h))
		}
		hm.Summarize()
		out = append(out, hm)
	}
	return out
}

// hunt is one explore campaign of the mutant's binary, stopped at the first
// run a checker the mutant names fails; the kill is read from findings.json.
func hunt(bin, out string, m huntMode, from uint64, catches []string, h huntFlags) reports.Hunt {
	run := reports.Hunt{From: from}
	until := strings.Join(catches, ",")
	if until == "" {
		until = anyChecker // a tool mutant names no checker: any failure kills it
	}
	args := []string{"explore", "--scenario", h.scenario, "--from", strconv.FormatUint(from, 10), "--budget",
		h.budget.String(), "-j", "1", "--shrink-budget", "0", "--until", until, "--out", out}
	if m.branches > 0 {
		args = append(args, "--branch", strconv.Itoa(m.branches))
	}
	if m.strategy != "" {
		args = append(args, "--strategy", m.strategy)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	// explore exits 1 when it finds something: that is the hunt working.
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == exitSafety) {
		run.Error = oneLine(err.Error())
		return run
	}
	b, err := os.ReadFile(filepath.Join(out, "findings.json"))
	var found Findings
	if err == nil {
		err = json.Unmarshal(b, &found)
	}
	if err != nil {
		run.Error = "findings.json: " + oneLine(err.Error())
		return run
	}
	run.Runs, run.Seconds = found.SeedsRun+found.BranchesRun, found.RunSeconds
	if len(catches) == 0 && found.Until != "" {
		catches = []string{found.Until}
	}
	for _, c := range catches {
		ff, ok := found.FirstFired[c]
		if ok && (!run.Killed || ff.Run < run.Runs) {
			run.Killed, run.Checker, run.Runs, run.Seconds = true, c, ff.Run, ff.Seconds
			run.Key = "seed " + strconv.FormatUint(ff.Seed, 10)
			if ff.Branch != "" {
				run.Key += " branch " + ff.Branch
			}
		}
	}
	return run
}
