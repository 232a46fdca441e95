package determinism

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The simulated packages and the systems under test follow DESIGN §3: every
// wall-clock read, global random draw and go statement outside the allow-list
// carries a marker that says why.
func TestTreeFollowsDeterminismRules(t *testing.T) {
	root, err := ModuleRoot(".")
	require.NoError(t, err)
	findings, files, err := CheckTree(root, CheckedDirs)
	require.NoError(t, err)
	require.Greater(t, files, 20, "the walk found the engine and the kernel")
	if len(findings) > 0 {
		var b strings.Builder
		for _, f := range findings {
			b.WriteString("\n  " + f.String())
		}
		t.Fatalf("%d determinism rule violations (fix them, or mark the line with // %s <why>):%s",
			len(findings), MarkerPrefix, b.String())
	}
}

// Every package that runs on the kernel is checked, so a package of actors
// moved out of sim/ does not leave the rules behind; and each of the
// simulator's packages has files the walk reads.
func TestEveryKernelUserIsChecked(t *testing.T) {
	root, err := ModuleRoot(".")
	require.NoError(t, err)
	const kernel = "github.com/dispatchsim/dispatchsim/sim/kernel"
	users := map[string]bool{"sim/kernel": true}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "third_party" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == kernel {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				users[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	for _, pkg := range []string{"sim", "sim/store", "sim/bus", "sim/workers", "sim/traffic"} {
		require.True(t, users[pkg], "%s runs on the kernel", pkg)
	}
	for pkg := range users {
		checked := false
		for _, dir := range CheckedDirs {
			checked = checked || pkg == dir || strings.HasPrefix(pkg, dir+"/")
		}
		require.True(t, checked, "%s imports the kernel but is not under CheckedDirs", pkg)
		_, files, err := CheckTree(root, []string{pkg})
		require.NoError(t, err)
		require.NotZero(t, files, pkg)
	}
}

// An allow-list entry that names a missing file exempts nothing and hides a
// rename; keep the list true.
func TestAllowListNamesExistingFiles(t *testing.T) {
	root, err := ModuleRoot(".")
	require.NoError(t, err)
	for path, entry := range Allowed {
		require.NotEmpty(t, entry.Why, path)
		_, err := os.Stat(filepath.Join(root, path))
		require.NoError(t, err, "allow-list entry %s", path)
	}
}

func TestCheckSourceFlagsAndExempts(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		allowed []Rule
		want    []string // "line rule"
	}{
		{name: "wall clock calls and values", src: `package p
import "time"
func f() {
	_ = time.Now()
	time.Sleep(time.Second)
	<-time.After(time.Second)
	g(time.Since)
	_ = time.NewTimer(0)
	_ = time.Duration(3) * time.Millisecond
	_ = time.Unix(0, 0)
}
func g(any) {}`, want: []string{"4 wall-clock", "5 wall-clock", "6 wall-clock", "7 wall-clock", "8 wall-clock"}},
		{name: "renamed time import", src: `package p
import stdtime "time"
var start = stdtime.Now()`, want: []string{"3 wall-clock"}},
		{name: "global rand v2 and v1", src: `package p
import (
	"math/rand/v2"
	old "math/rand"
)
func f() int {
	rand.Shuffle(2, func(i, j int) {})
	_ = old.Intn(3)
	return rand.IntN(4)
}`, want: []string{"7 global-rand", "8 global-rand", "9 global-rand"}},
		{name: "seeded rand is legal", src: `package p
import "math/rand/v2"
type w struct{ rng *rand.Rand }
func f(seed uint64) int {
	r := rand.New(rand.NewPCG(seed, 1))
	var src rand.Source = rand.NewPCG(1, 2)
	_ = src
	return r.IntN(4)
}`},
		{name: "a local variable named rand is not the package", src: `package p
import "math/rand/v2"
type gen struct{}
func (gen) IntN(n int) int { return 0 }
var _ = rand.New
func f() int {
	rand := gen{}
	return rand.IntN(3)
}`},
		{name: "go statements", src: `package p
func f() {
	go f()
	go func() {}()
}`, want: []string{"3 go-statement", "4 go-statement"}},
		{name: "marker on the line or the line above", src: `package p
import "time"
func f() {
	_ = time.Now() // determinism-ok: a reported figure
	// determinism-ok: watchdog on wall time
	go f()
	_ = time.Now()
}`, want: []string{"7 wall-clock"}},
		{name: "a marker needs a reason", src: `package p
import "time"
func f() {
	_ = time.Now() // determinism-ok:
}`, want: []string{"4 marker-without-why", "4 wall-clock"}},
		{name: "allow-listed file", src: `package p
import "time"
func f() {
	_ = time.Now()
	go f()
}`, allowed: []Rule{RuleWallClock}, want: []string{"5 go-statement"}},
		{name: "a method called Now on a value is legal", src: `package p
import "time"
type clock interface{ Now() time.Time }
func f(c clock) time.Time { return c.Now() }`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			findings, err := CheckSource("p.go", []byte(c.src), c.allowed...)
			require.NoError(t, err)
			var got []string
			for _, f := range findings {
				got = append(got, strings.Join([]string{strconv.Itoa(f.Line), string(f.Rule)}, " "))
				require.Contains(t, f.String(), "p.go:", "a finding names file:line")
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestCheckSourceReportsParseErrors(t *testing.T) {
	_, err := CheckSource("bad.go", []byte("package p\nfunc {"))
	require.ErrorContains(t, err, "parse bad.go")
}
