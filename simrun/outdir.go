package simrun

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dispatchsim/dispatchsim/scenarios"
)

// runOutputs are the files a run writes at the top of --out.
var runOutputs = []string{"summary.json", "index.html"}

// artifactFiles are the files of a seed folder; a folder holding anything
// else is not ours and is left alone.
var artifactFiles = map[string]bool{"trace.log": true, "plan.json": true, "history.json": true, "seed.json": true,
	"report.html": true, "plan.min.json": true, "min": true, "replay": true}

// cleanOutDir removes a previous run's outputs from out, so the new summary
// is the only account there: a stale seed folder would otherwise be replayed
// against the wrong run. Only what simrun writes goes: the top-level outputs
// and <scenario>/<seed> folders of known scenarios holding artifact files
// (or the temporary files of an interrupted write). It returns how many seed
// folders it removed.
func cleanOutDir(out string) (int, error) {
	for _, name := range runOutputs {
		if err := os.Remove(filepath.Join(out, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	removed := 0
	for _, sc := range scenarios.All() {
		dir := filepath.Join(out, sc.Name)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			seedDir := filepath.Join(dir, e.Name())
			if _, err := strconv.ParseUint(e.Name(), 10, 64); err != nil || !e.IsDir() || !isSeedFolder(seedDir) {
				continue
			}
			if err := os.RemoveAll(seedDir); err != nil {
				return removed, err
			}
			removed++
		}
		_ = os.Remove(dir) // only if now empty
	}
	return removed, nil
}

// isSeedFolder reports whether dir holds only what simrun writes for a seed.
func isSeedFolder(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		if !artifactFiles[e.Name()] && !(strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-")) {
			return false
		}
	}
	return true
}

// copyDir copies the regular files and folders under src into dst, which
// must not exist yet: a merged artifact is complete on its own.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
