package determinism

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CheckedDirs are the module directories whose non-test code runs inside the
// simulation or decides its outcome: the engine, the simulator (sim and its
// packages: kernel, store, bus, workers, traffic), faults, checks, models,
// scenarios and every system under test, the examples' modules included.
// Directories are walked recursively; one that does not exist yet is skipped.
var CheckedDirs = []string{"engine", "sim", "sut", "history", "faults", "checker", "model", "scenarios", "systems", "examples"}

// Allowed exempts whole files from rules, each for a stated reason. Keep it
// short: a marker on the line is the better exemption, because it sits where a
// reader sees it.
var Allowed = map[string]struct {
	Rules []Rule
	Why   string
}{
	"sim/kernel/kernel.go": {[]Rule{RuleGoStatement},
		"the kernel starts each actor's goroutine; an actor runs only while it holds the baton"},
	"engine/ports.go": {[]Rule{RuleWallClock},
		"RealClock is the production clock"},
	"systems/outbox/dispatch/ports.go": {[]Rule{RuleWallClock},
		"RealClock is the production clock"},
}

// CheckTree checks the non-test .go files under dirs (relative to root,
// recursively, testdata excluded). It returns the findings with paths relative
// to root, and how many files it read.
func CheckTree(root string, dirs []string) ([]Finding, int, error) {
	var findings []Finding
	files := 0
	for _, dir := range dirs {
		start := filepath.Join(root, dir)
		if _, err := os.Stat(start); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			src, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("read %s: %w", rel, err)
			}
			found, err := CheckSource(rel, src, Allowed[rel].Rules...)
			if err != nil {
				return err
			}
			files++
			findings = append(findings, found...)
			return nil
		})
		if err != nil {
			return nil, files, fmt.Errorf("check %s: %w", dir, err)
		}
	}
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].File < findings[j].File })
	return findings, files, nil
}

// ModuleRoot walks up from dir to the directory holding go.mod.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("module root: no go.mod above %s", dir)
		}
		dir = parent
	}
}
