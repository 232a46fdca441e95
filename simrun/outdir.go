package simrun

import (
	"errors"
	"fmt"
	"io"
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

// cleanOutDir clears a previous run's outputs from out, so the new summary
// is the only account there: a stale seed folder would otherwise be replayed
// against the wrong run. Only what simrun writes is touched: the top-level
// outputs and <scenario>/<seed> folders of known scenarios holding artifact
// files (or the temporary files of an interrupted write). A previous run's
// failing seeds are evidence: unless discard is set they are moved, with that
// run's summary and index, into a new out/previous-run-N folder, named in
// movedTo. It returns how many seed folders it moved or removed.
func cleanOutDir(out string, discard bool) (n int, movedTo string, err error) {
	var seedDirs []string
	for _, sc := range scenarios.All() {
		entries, err := os.ReadDir(filepath.Join(out, sc.Name))
		if err != nil {
			continue
		}
		for _, e := range entries {
			seedDir := filepath.Join(out, sc.Name, e.Name())
			if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() && isSeedFolder(seedDir) {
				seedDirs = append(seedDirs, seedDir)
			}
		}
	}
	if !discard && len(seedDirs) > 0 {
		if movedTo, err = freePreviousDir(out); err != nil {
			return 0, "", err
		}
	}
	keep := func(path string) error {
		if movedTo == "" {
			return os.RemoveAll(path)
		}
		rel, err := filepath.Rel(out, path)
		if err != nil {
			return err
		}
		target := filepath.Join(movedTo, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.Rename(path, target)
	}
	for _, name := range runOutputs {
		if err := keep(filepath.Join(out, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, movedTo, err
		}
	}
	for _, dir := range seedDirs {
		if err := keep(dir); err != nil {
			return n, movedTo, err
		}
		n++
		_ = os.Remove(filepath.Dir(dir)) // only if now empty
	}
	return n, movedTo, nil
}

// freePreviousDir makes the first out/previous-run-N that does not exist yet.
func freePreviousDir(out string) (string, error) {
	for i := 1; ; i++ {
		dir := filepath.Join(out, "previous-run-"+strconv.Itoa(i))
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
}

// reportCleared tells, in one line, what cleanOutDir did with a previous run.
func reportCleared(w io.Writer, out string, n int, movedTo string) {
	switch {
	case n == 0:
	case movedTo != "":
		fmt.Fprintf(w, "%s: moved %d failing seed folders of a previous run from %s to %s (--discard-previous deletes them instead)\n",
			progName, n, out, movedTo)
	default:
		fmt.Fprintf(w, "%s: removed %d seed folders of a previous run from %s\n", progName, n, out)
	}
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
