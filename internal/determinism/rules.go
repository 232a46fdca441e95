// Package determinism enforces the kernel's contract (DESIGN §3) on source
// code: the simulated packages and the systems under test never read the wall
// clock, never draw from math/rand's global source, and never start a
// goroutine the kernel does not schedule.
//
// The rules are syntactic (go/parser and go/ast, no type checking): each one
// looks at a selector on an imported package name or at a go statement, which
// needs no types, runs in milliseconds and has no dependency beyond the
// standard library. A line is exempt when it, or the line above it, carries
// "// determinism-ok: <why>"; the reason is required.
//
// This package never changes the code it checks; it only reports.
package determinism

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// Rule names one banned pattern.
type Rule string

// The rules.
const (
	RuleWallClock   Rule = "wall-clock"         // time.Now, time.Sleep, timers, tickers
	RuleGlobalRand  Rule = "global-rand"        // math/rand's package-level source
	RuleGoStatement Rule = "go-statement"       // a goroutine the kernel does not schedule
	RuleEmptyMarker Rule = "marker-without-why" // "determinism-ok:" with no reason
)

// MarkerPrefix starts the comment that exempts its line and the next one.
const MarkerPrefix = "determinism-ok:"

// Finding is one violation, at a file position.
type Finding struct {
	File   string
	Line   int
	Rule   Rule
	Detail string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.Detail)
}

// wallClockFuncs are the package time functions that read or wait on the wall
// clock. time.Duration arithmetic, time.Unix and friends are pure and allowed.
var wallClockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"Tick": true, "NewTicker": true, "NewTimer": true, "AfterFunc": true,
}

// seededRandNames are the math/rand and math/rand/v2 names that do not touch
// the global source: constructors of an explicitly seeded generator and types.
// Every other package-level name (IntN, Shuffle, Perm, Seed, ...) does.
var seededRandNames = map[string]bool{
	"New": true, "NewPCG": true, "NewChaCha8": true, "NewSource": true, "NewZipf": true,
	"Rand": true, "PCG": true, "ChaCha8": true, "Source": true, "Source64": true, "Zipf": true,
}

// CheckSource parses one Go file and returns its findings, sorted by line.
// allowed lists rules the whole file is exempt from (the kernel's scheduler,
// the real clocks).
func CheckSource(filename string, src []byte, allowed ...Rule) ([]Finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filename, err)
	}
	c := &fileChecker{fset: fset, name: filename, allowed: map[Rule]bool{}, markers: map[int]bool{}}
	for _, r := range allowed {
		c.allowed[r] = true
	}
	c.readMarkers(f)
	c.readImports(f)
	ast.Inspect(f, c.visit)
	sort.SliceStable(c.findings, func(i, j int) bool { return c.findings[i].Line < c.findings[j].Line })
	return c.findings, nil
}

type fileChecker struct {
	fset     *token.FileSet
	name     string
	allowed  map[Rule]bool
	markers  map[int]bool    // lines carrying a marker with a reason
	timeName map[string]bool // local names of package time
	randName map[string]bool // local names of math/rand, math/rand/v2
	findings []Finding
}

func (c *fileChecker) readMarkers(f *ast.File) {
	for _, group := range f.Comments {
		for _, cm := range group.List {
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(cm.Text, "//"), "/*"))
			if !strings.HasPrefix(text, MarkerPrefix) {
				continue
			}
			line := c.fset.Position(cm.Pos()).Line
			why := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(text, MarkerPrefix), "*/"))
			if why == "" {
				c.findings = append(c.findings, Finding{File: c.name, Line: line, Rule: RuleEmptyMarker,
					Detail: "a determinism-ok marker must say why"})
				continue
			}
			c.markers[line] = true
		}
	}
}

func (c *fileChecker) readImports(f *ast.File) {
	c.timeName, c.randName = map[string]bool{}, map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if path == "math/rand/v2" {
			local = "rand"
		}
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch path {
		case "time":
			c.timeName[local] = true
		case "math/rand", "math/rand/v2":
			c.randName[local] = true
		}
	}
}

func (c *fileChecker) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.GoStmt:
		c.report(n.Pos(), RuleGoStatement, "go statement: start concurrent work through the clock or the kernel")
	case *ast.SelectorExpr:
		pkg, ok := n.X.(*ast.Ident)
		// Obj is set for identifiers declared in this file (a local variable
		// named rand or time); a package name is never resolved to one.
		if !ok || pkg.Obj != nil {
			return true
		}
		name := n.Sel.Name
		switch {
		case c.timeName[pkg.Name] && wallClockFuncs[name]:
			c.report(n.Pos(), RuleWallClock, fmt.Sprintf("%s.%s reads the wall clock: use the Clock port", pkg.Name, name))
		case c.randName[pkg.Name] && !seededRandNames[name]:
			c.report(n.Pos(), RuleGlobalRand, fmt.Sprintf("%s.%s draws from the global source: use a seeded *rand.Rand", pkg.Name, name))
		}
	}
	return true
}

func (c *fileChecker) report(pos token.Pos, rule Rule, detail string) {
	if c.allowed[rule] {
		return
	}
	line := c.fset.Position(pos).Line
	if c.markers[line] || c.markers[line-1] {
		return
	}
	c.findings = append(c.findings, Finding{File: c.name, Line: line, Rule: rule, Detail: detail})
}
