package mutants

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/internal/longtest"
)

// Every weakening still applies to the tree, names a test that exists, and
// has a unique name: a catalog an edit left behind fails here, at once.
func TestWeakeningsApply(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range Weakenings {
		require.False(t, seen[w.Name], "duplicate %s", w.Name)
		seen[w.Name] = true
		require.NotEmpty(t, w.Judge, w.Name)
		require.NotEmpty(t, w.Fails, w.Name)
		_, err := w.Overlay(moduleRoot("."), t.TempDir())
		require.NoError(t, err, w.Name)
		require.True(t, testExists(t, w.Package, strings.SplitN(w.Test, "/", 2)[0]), "%s: no test %s in %s", w.Name, w.Test, w.Package)
	}
}

// weakeningFlag keeps the weakenings whose names match it (go test ./mutants
// -run TestEveryWeakeningIsKilled -weakening NAME).
var weakeningFlag = flag.String("weakening", "", "run only the weakenings whose names match this regular expression")

// Every weakening dies by its test, for the predicted reason. Each builds
// its package's tests with the weakening in, so the catalog runs in the long
// run (DISPATCHSIM_LONG=1), two at a time.
func TestEveryWeakeningIsKilled(t *testing.T) {
	longtest.Require(t, "builds and runs a package's tests per weakening")
	only, err := regexp.Compile(*weakeningFlag)
	require.NoError(t, err, "-weakening")
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, w := range Weakenings {
		if !only.MatchString(w.Name) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			killed, out, err := w.Kill(context.Background(), moduleRoot("."))
			if err != nil {
				t.Errorf("%v", err)
				return
			}
			if !killed {
				t.Errorf("weakening %s (%s) survived %s in %s:\n%s", w.Name, w.Judge, w.Test, w.Package, firstLines(out, 20))
			}
		}()
	}
	wg.Wait()
}

// testExists reports whether a _test.go file of pkg (a ./path from the
// module root) declares func name.
func testExists(t *testing.T, pkg, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(moduleRoot("."), pkg, "*_test.go"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.Contains(string(b), "\nfunc "+name+"(t *testing.T)") {
			return true
		}
	}
	return false
}

// moduleRoot is the repository root as seen from this package's directory.
func moduleRoot(from string) string { return filepath.Clean(filepath.Join(from, "..")) }
