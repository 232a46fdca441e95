package mutants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The statuses of a mutant judged by its package's own tests.
const (
	HarnessKilled     = "killed"
	HarnessSurvived   = "survived"
	HarnessEquivalent = "equivalent" // survived, triaged in harness-equivalent.txt
	HarnessNotCovered = "not covered"
	HarnessNotViable  = "not viable"
	HarnessTimedOut   = "timed out"
)

// Judged is one tool mutant of the harness and what its package's tests made
// of it.
type Judged struct {
	Site    string `json:"site"`
	Mutator string `json:"mutator"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"` // an equivalent's, from the triage file
}

// JudgeByOwnTests runs the package in pkgDir's own tests (go test, as
// gremlins' unit mode does) against each of its mutants gs, as listed by a
// gremlins dry run: a NOT COVERED mutant stays not covered; the others are
// built once, as a schemata (BuildSchemata), and the test binary is run once
// per mutant, jobs at a time. A mutant the schemata cannot carry (its rewrite
// does not compile) gets a build of its own, as gremlins would build it.
func JudgeByOwnTests(root, pkgDir string, gs []Gremlin, jobs int, progress io.Writer) ([]Judged, error) {
	dir, err := os.MkdirTemp("", "harness-score-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := make([]Judged, len(gs))
	var runnable []Gremlin
	index := map[string]int{}
	for i, g := range gs {
		out[i] = Judged{Site: g.Site, Mutator: g.Mutator}
		index[g.Site] = i
		if g.ToolStatus == "NOT COVERED" {
			out[i].Status = HarnessNotCovered
			continue
		}
		runnable = append(runnable, g)
	}

	alone := map[string]bool{}
	var sc Schemata
	bin := filepath.Join(dir, "pkg.test")
	for {
		sc, err = BuildSchemata(root, dir, pkgDir, runnable, alone)
		if err != nil {
			return nil, err
		}
		build := exec.Command("go", "test", "-c", "-o", bin, "-overlay", sc.Overlay, "./"+pkgDir)
		build.Dir = root
		msg, err := build.CombinedOutput()
		if err == nil {
			break
		}
		more := sitesOfCompileErrors(sc, string(msg))
		if len(more) == 0 {
			return nil, fmt.Errorf("schemata build of %s: %v\n%s", pkgDir, err, msg)
		}
		for _, s := range more {
			alone[s] = true
		}
	}
	pkgPath := filepath.Join(root, filepath.FromSlash(pkgDir))
	// The unmutated binary must pass, or no mutant's failure means anything.
	start := time.Now() // determinism-ok: sizes the per-mutant timeout, never a verdict
	if status := runTestBinary(bin, pkgPath, 0, 10*time.Minute); status != HarnessSurvived {
		return nil, fmt.Errorf("%s: the schemata build without a mutant does not pass its tests (%s)", pkgDir, status)
	}
	timeout := max(30*time.Second, 20*time.Since(start)) // determinism-ok: as above

	var mu sync.Mutex
	done := 0
	report := func(site, status string) {
		mu.Lock()
		defer mu.Unlock()
		out[index[site]].Status = status
		done++
		fmt.Fprintf(progress, "%s [%d/%d] %s %s\n", pkgDir, done, len(runnable), status, site)
	}
	work := make(chan Gremlin)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				if alone[g.Site] {
					report(g.Site, judgeAlone(root, pkgDir, g, timeout))
					continue
				}
				report(g.Site, runTestBinary(bin, pkgPath, sc.IDs[g.Site], timeout))
			}
		}()
	}
	for _, g := range runnable {
		work <- g
	}
	close(work)
	wg.Wait()
	return out, nil
}

var compileError = regexp.MustCompile(`(?m)^(\S+\.go):(\d+):(?:(\d+):)? `)

// sitesOfCompileErrors lists the mutants whose rewrite a build's errors point into.
func sitesOfCompileErrors(sc Schemata, msg string) []string {
	var out []string
	for _, m := range compileError.FindAllStringSubmatch(msg, -1) {
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		out = append(out, sc.SitesAt(m[1], line, col)...)
	}
	return out
}

// testMemoryKB caps a mutant's test process (ulimit -v): a mutant that
// appends forever would otherwise take the machine's memory before its
// timeout. Running out of it is a run that never ends: timed out.
const testMemoryKB = 6 << 20

// runTestBinary runs a schemata test binary with mutant id switched on.
func runTestBinary(bin, dir string, id int, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, testMemoryKB),
		bin, "-test.count=1", "-test.failfast")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", MutantSwitch, id))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), err != nil && strings.Contains(stderr.String(), "out of memory"):
		return HarnessTimedOut
	case err != nil:
		return HarnessKilled
	}
	return HarnessSurvived
}

// judgeAlone builds one mutant on its own and runs the package's tests.
func judgeAlone(root, pkgDir string, g Gremlin, timeout time.Duration) string {
	dir, err := os.MkdirTemp("", "harness-mutant-")
	if err != nil {
		return HarnessNotViable
	}
	defer os.RemoveAll(dir)
	overlay, err := g.Overlay(root, dir)
	if err != nil {
		return HarnessNotViable
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Minute) // the build, too
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-failfast", "-overlay", overlay, "./"+pkgDir)
	cmd.Dir = root
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	err = cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return HarnessTimedOut
	case err == nil:
		return HarnessSurvived
	case strings.Contains(msg.String(), "[build failed]") || strings.Contains(msg.String(), "[setup failed]"):
		return HarnessNotViable
	}
	return HarnessKilled
}
