package layering

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/dispatchsim/dispatchsim"

// rule: a package (and everything it imports, transitively, in non-test
// files) must not reach any of the forbidden packages or prefixes.
type rule struct {
	pkg       string
	forbidden []string
	why       string
}

var rules = []rule{
	{"sim", []string{"engine", "systems/"}, "the simulator is engine-agnostic: a system plugs in through sut"},
	{"sim/kernel", []string{"engine", "systems/", "sim", "sim/store", "sim/bus", "sim/workers", "sim/traffic", "faults", "checker", "scenarios"},
		"the kernel is the bottom of the simulator: everything else runs on it"},
	{"sim/kernel/kerneltest", []string{"engine", "systems/", "sim", "sim/store", "sim/bus", "sim/workers", "sim/traffic"},
		"the tests' stand-in for a world builds on the kernel alone"},
	{"sim/store", []string{"engine", "systems/", "sim", "sim/bus", "sim/workers", "sim/traffic", "faults", "checker", "scenarios"},
		"the simulated store knows the kernel and a system's observer, nothing above"},
	{"sim/bus", []string{"engine", "systems/", "sim", "sim/store", "sim/workers", "sim/traffic", "faults", "checker", "scenarios"},
		"the simulated bus knows the kernel and a system's observer, nothing above"},
	{"sim/workers", []string{"engine", "systems/", "sim", "sim/traffic", "faults", "checker", "scenarios"},
		"workers see a system only through its worker protocol"},
	{"sim/traffic", []string{"engine", "systems/", "sim", "sim/workers", "faults", "checker", "scenarios"},
		"clients see a system only through its gateway"},
	{"sut", []string{"sim", "engine", "systems/", "history", "checker"}, "the boundary depends on nothing of either side"},
	{"history", []string{"sim", "engine", "systems/"}, "the run record holds plain facts"},
	{"checker", []string{"sim", "engine", "systems/"}, "checkers read facts and the spec, never a system's types"},
	{"model", []string{"sim", "engine", "systems/", "sut"}, "the models take the system's transition graph as an argument"},
	{"reports", []string{"sim", "engine", "systems/", "scenarios", "faults"}, "reports read checker results and the history"},
	{"faults", []string{"engine", "systems/"}, "faults match operations through the observer's facts"},
	{"engine", []string{"sim", "sut", "systems/", "faults", "checker", "history", "scenarios"}, "the engine is production code"},
	{"engine/natsbus", []string{"sim", "sut", "systems/", "faults", "checker", "history", "scenarios"},
		"the engine's JetStream bus is production code"},
	{"engine/natsbus/natsbustest", []string{"sim", "sut", "systems/", "faults", "checker", "history", "scenarios"},
		"the embedded server for tests of production code"},
	{"systems/cordum", []string{"sim", "faults", "checker", "scenarios"}, "an adapter sees the simulator only through sut"},
	{"systems/outbox", []string{"sim", "faults", "checker", "scenarios", "engine"}, "an adapter sees the simulator only through sut"},
}

// Only the adapter (and mutants, and tests) may import engine directly.
var engineImporters = map[string]bool{"systems/cordum": true, "mutants": true}

func TestDependencyRules(t *testing.T) {
	root := moduleRoot(t)
	g := newGraph(root)
	for _, r := range rules {
		if _, err := os.Stat(filepath.Join(root, r.pkg)); err != nil {
			continue // a package not built yet
		}
		for _, dep := range g.deps(t, r.pkg) {
			for _, f := range r.forbidden {
				if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) && strings.HasSuffix(f, "/") {
					t.Errorf("%s imports %s (transitively): %s", r.pkg, dep, r.why)
				}
			}
		}
	}
}

func TestOnlyTheAdapterImportsEngine(t *testing.T) {
	root := moduleRoot(t)
	g := newGraph(root)
	for _, pkg := range g.all(t) {
		if pkg == "engine" || strings.HasPrefix(pkg, "engine/") || engineImporters[pkg] {
			continue
		}
		for _, imp := range g.imports(t, pkg) {
			require.NotEqual(t, "engine", imp, "%s imports engine directly; go through systems/cordum", pkg)
		}
	}
}

// The boundary imports nothing but the standard library, go-redis and
// prometheus types.
func TestBoundaryImportsOnlyRedisAndPrometheus(t *testing.T) {
	g := newGraph(moduleRoot(t))
	for _, imp := range g.external(t, "sut") {
		ok := !strings.Contains(strings.Split(imp, "/")[0], ".") ||
			strings.HasPrefix(imp, "github.com/redis/go-redis/") ||
			strings.HasPrefix(imp, "github.com/prometheus/client_golang/prometheus")
		require.True(t, ok, "sut imports %s", imp)
	}
}

// A rule that names a package the walk cannot find checks nothing.
func TestRulesNameRealPackages(t *testing.T) {
	root := moduleRoot(t)
	for _, r := range rules {
		if r.pkg == "systems/outbox" {
			continue // the adapter's package is checked when present
		}
		_, err := os.Stat(filepath.Join(root, r.pkg))
		require.NoError(t, err, r.pkg)
	}
}

// A checked package that reaches a forbidden one is reported: the walk sees
// transitive imports.
func TestWalkSeesTransitiveImports(t *testing.T) {
	g := newGraph(moduleRoot(t))
	require.Contains(t, g.deps(t, "scenarios"), "engine", "scenarios reaches engine through systems/cordum")
}

type graph struct {
	root  string
	cache map[string][]string // module-relative package -> direct imports (module-relative or external)
}

func newGraph(root string) *graph { return &graph{root: root, cache: map[string][]string{}} }

// imports lists a package's direct imports from its non-test files: module
// packages relative to the module, others in full.
func (g *graph) imports(t *testing.T, pkg string) []string {
	if imps, ok := g.cache[pkg]; ok {
		return imps
	}
	dir := filepath.Join(g.root, pkg)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err, pkg)
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, spec := range f.Imports {
			path, _ := strconv.Unquote(spec.Path.Value)
			if rel, ok := strings.CutPrefix(path, module+"/"); ok {
				path = rel
			}
			seen[path] = true
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	g.cache[pkg] = out
	return out
}

func (g *graph) internal(pkg string) bool {
	st, err := os.Stat(filepath.Join(g.root, pkg))
	return !strings.Contains(strings.Split(pkg, "/")[0], ".") && err == nil && st.IsDir()
}

// deps is every module package pkg reaches.
func (g *graph) deps(t *testing.T, pkg string) []string {
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		for _, imp := range g.imports(t, p) {
			if !seen[imp] && g.internal(imp) {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// external is every import outside the module that pkg reaches.
func (g *graph) external(t *testing.T, pkg string) []string {
	var out []string
	for _, p := range append([]string{pkg}, g.deps(t, pkg)...) {
		for _, imp := range g.imports(t, p) {
			if !g.internal(imp) {
				out = append(out, imp)
			}
		}
	}
	return out
}

// all lists the module's packages with Go files, third_party excepted.
func (g *graph) all(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir(g.root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != g.root && (name == "third_party" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, _ := filepath.Rel(g.root, filepath.Dir(path))
			if len(out) == 0 || out[len(out)-1] != rel {
				out = append(out, rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(fmt.Sprintf("no go.mod above %s", dir))
		}
		dir = parent
	}
}

// The engine's core reaches NATS only through its Bus port: the JetStream
// bus is a package of its own that a simulation never builds.
func TestEngineCoreImportsNoNATS(t *testing.T) {
	g := newGraph(moduleRoot(t))
	for _, imp := range g.external(t, "engine") {
		require.False(t, strings.HasPrefix(imp, "github.com/nats-io/"), "engine imports %s", imp)
	}
	require.Contains(t, g.external(t, "engine/natsbus"), "github.com/nats-io/nats.go/jetstream", "the walk sees the bus's imports")
}
