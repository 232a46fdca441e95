package mutants

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// MutantSwitch is the environment variable that turns one mutant of a
// schemata build on, by its number (Schemata.IDs); unset, none is.
const MutantSwitch = "DISPATCHSIM_MUTANT"

// Schemata is a package built with every tool mutant in it, each behind a
// switch read from MutantSwitch: one build serves them all, where building
// each mutant (gremlins' way) costs the package's test binary per mutant,
// minutes of builds for a second of tests.
type Schemata struct {
	Overlay string         // a go build -overlay file
	IDs     map[string]int // mutant site -> the number that turns it on
	// spans are the rewritten stretches of each file, by base name, to
	// trace a compile error back to the mutants written there.
	spans map[string][]schemataSpan
	text  map[string]string
}

type schemataSpan struct {
	from, to int
	sites    []string
}

// schemataSite is one operator the tool mutates, with each of its mutants.
type schemataSite struct {
	node       ast.Node
	start, end int
	mutants    []schemataMutant
}

// schemataMutant is one token replacement at byte offset at.
type schemataMutant struct {
	site     string
	id       int
	at       int
	from, to string
}

// BuildSchemata writes into dir an overlay of the package in pkgDir (a slash
// path from root) that carries every mutant of gs but those in skip, each
// behind its switch. gs are the package's mutants as ReadGremlinsOf reads
// them: one token replacement each.
func BuildSchemata(root, dir, pkgDir string, gs []Gremlin, skip map[string]bool) (Schemata, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return Schemata{}, err
	}
	sc := Schemata{IDs: map[string]int{}, spans: map[string][]schemataSpan{}, text: map[string]string{}}
	byFile := map[string][]Gremlin{}
	var files []string
	for _, g := range gs {
		if skip[g.Site] {
			continue
		}
		f := g.Edits[0].File
		if _, seen := byFile[f]; !seen {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], g)
	}
	sort.Strings(files)
	replace := map[string]string{}
	pkgName := ""
	for _, file := range files {
		src := filepath.Join(root, filepath.FromSlash(file))
		b, err := os.ReadFile(src)
		if err != nil {
			return Schemata{}, err
		}
		text, spans, name, err := sc.rewrite(string(b), file, byFile[file])
		if err != nil {
			return Schemata{}, err
		}
		pkgName = name
		dst := filepath.Join(dir, strings.ReplaceAll(file, "/", "_"))
		if err := os.WriteFile(dst, []byte(text), 0o644); err != nil {
			return Schemata{}, err
		}
		replace[src] = dst
		// A compile error names the overlay's copy.
		sc.spans[filepath.Base(dst)] = spans
		sc.text[filepath.Base(dst)] = text
	}
	if pkgName != "" {
		dst := filepath.Join(dir, "schemata_switch.go")
		if err := os.WriteFile(dst, []byte(fmt.Sprintf(schemataSwitch, pkgName, MutantSwitch)), 0o644); err != nil {
			return Schemata{}, err
		}
		replace[filepath.Join(root, filepath.FromSlash(pkgDir), "schemata_switch.go")] = dst
	}
	b, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return Schemata{}, err
	}
	sc.Overlay = filepath.Join(dir, "overlay.json")
	return sc, os.WriteFile(sc.Overlay, b, 0o644)
}

// schemataSwitch is the file the overlay adds to the package: the switch.
// A mutated arithmetic expression evaluates both forms (Go has no typed
// conditional expression), so the unmutated run must pass as well.
const schemataSwitch = `package %s

import (
	"os"
	"strconv"
)

var schemataActive, _ = strconv.Atoi(os.Getenv(%q))

func schemataOn(id int) bool { return id == schemataActive }

func schemataPick[T any](on bool, mutated, original T) T {
	if on {
		return mutated
	}
	return original
}
`

// rewrite returns text with each site's operator behind switches, the
// rewritten spans, and the package's name.
func (sc *Schemata) rewrite(text, file string, gs []Gremlin) (string, []schemataSpan, string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, text, parser.SkipObjectResolution)
	if err != nil {
		return "", nil, "", err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	byOperator := map[int]ast.Node{}
	parent := map[ast.Node]ast.Node{}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if len(stack) > 0 {
			parent[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.BinaryExpr:
			byOperator[off(n.OpPos)] = n
		case *ast.UnaryExpr:
			byOperator[off(n.OpPos)] = n
		case *ast.IncDecStmt:
			byOperator[off(n.TokPos)] = n
		}
		return true
	})
	sites := map[ast.Node]*schemataSite{}
	var order []*schemataSite
	for _, g := range gs {
		e := g.Edits[0]
		at := offsetOf(text, e.Line, e.Column)
		n, ok := byOperator[at]
		if !ok {
			return "", nil, "", fmt.Errorf("%s: no operator the tool mutates there", g.Site)
		}
		if e.From == "&&" || e.From == "||" {
			// The tool replaces the token and the file is parsed again: "a &&
			// b && c" with its first && inverted is "a || (b && c)". The
			// switch goes around the whole chain of && and ||, which the
			// replacement may regroup.
			for {
				up, ok := parent[n].(*ast.BinaryExpr)
				if !ok || up.Op != token.LAND && up.Op != token.LOR {
					break
				}
				n = up
			}
		}
		s, seen := sites[n]
		if !seen {
			s = &schemataSite{node: n, start: off(n.Pos()), end: off(n.End())}
			sites[n] = s
			order = append(order, s)
		}
		id := len(sc.IDs) + 1
		sc.IDs[g.Site] = id
		s.mutants = append(s.mutants, schemataMutant{site: g.Site, id: id, at: at, from: e.From, to: e.To})
	}
	// Outer sites first, so a site inside another is rewritten within it.
	sort.Slice(order, func(i, j int) bool {
		if order[i].start != order[j].start {
			return order[i].start < order[j].start
		}
		return order[i].end > order[j].end
	})
	r := schemataRewriter{text: text, sites: order, off: off}
	var out strings.Builder
	var spans []schemataSpan
	cursor := 0
	for _, s := range order {
		if s.start < cursor {
			continue // inside the last top-level site
		}
		out.WriteString(text[cursor:s.start])
		from := out.Len()
		out.WriteString(r.site(s))
		spans = append(spans, schemataSpan{from: from, to: out.Len(), sites: r.sitesWithin(s.start, s.end)})
		cursor = s.end
	}
	out.WriteString(text[cursor:])
	return out.String(), spans, f.Name.Name, nil
}

type schemataRewriter struct {
	text  string
	sites []*schemataSite
	off   func(token.Pos) int
}

// span is text[from:to] with every site inside it rewritten.
func (r schemataRewriter) span(from, to int) string {
	var out strings.Builder
	cursor := from
	for _, s := range r.sites {
		if s.start < cursor || s.end > to {
			continue
		}
		out.WriteString(r.text[cursor:s.start])
		out.WriteString(r.site(s))
		cursor = s.end
	}
	out.WriteString(r.text[cursor:to])
	return out.String()
}

func (r schemataRewriter) of(n ast.Node) string { return r.span(r.off(n.Pos()), r.off(n.End())) }

// site is the site's expression (or statement) choosing, by the switch,
// each mutant or the original. A mutant's form is the site's text with its
// token replaced (only one mutant is on at a time); the original keeps the
// switches of the sites inside it.
func (r schemataRewriter) site(s *schemataSite) string {
	mutated := func(m schemataMutant) string {
		// The markers tell which mutant a compile error is in (SitesAt).
		return fmt.Sprintf("/*schemata:%d{*/(%s%s%s)/*}*/", m.id, r.text[s.start:m.at], m.to, r.text[m.at+len(m.from):s.end])
	}
	switch n := s.node.(type) {
	case *ast.BinaryExpr:
		original := fmt.Sprintf("(%s) %s (%s)", r.of(n.X), n.Op, r.of(n.Y))
		if isBoolOperator(n.Op) {
			// A closure keeps && and || short-circuiting.
			var b strings.Builder
			b.WriteString("func() bool { ")
			for _, m := range s.mutants {
				fmt.Fprintf(&b, "if schemataOn(%d) { return %s }; ", m.id, mutated(m))
			}
			fmt.Fprintf(&b, "return %s }()", original)
			return b.String()
		}
		return r.pick(s, mutated, original)
	case *ast.UnaryExpr:
		return r.pick(s, mutated, fmt.Sprintf("%s(%s)", n.Op, r.of(n.X)))
	case *ast.IncDecStmt:
		x := r.of(n.X)
		step := map[string]string{"++": "+", "--": "-"}
		expr := fmt.Sprintf("(%s) %s 1", x, step[n.Tok.String()])
		for _, m := range s.mutants {
			expr = fmt.Sprintf("schemataPick(schemataOn(%d), (%s) %s 1, %s)", m.id, x, step[m.to], expr)
		}
		return x + " = " + expr
	}
	panic(fmt.Sprintf("mutants: no rewrite for %T", s.node))
}

// pick chooses among the mutants' values and the original's.
func (r schemataRewriter) pick(s *schemataSite, mutated func(schemataMutant) string, original string) string {
	expr := original
	for _, m := range s.mutants {
		expr = fmt.Sprintf("schemataPick(schemataOn(%d), %s, %s)", m.id, mutated(m), expr)
	}
	return expr
}

// sitesWithin lists the mutants written inside text[from:to].
func (r schemataRewriter) sitesWithin(from, to int) []string {
	var out []string
	for _, s := range r.sites {
		if s.start >= from && s.end <= to {
			for _, m := range s.mutants {
				out = append(out, m.site)
			}
		}
	}
	return out
}

func isBoolOperator(op token.Token) bool {
	switch op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ, token.LAND, token.LOR:
		return true
	}
	return false
}

var schemataMarker = regexp.MustCompile(`/\*schemata:(\d+)\{\*/|/\*\}\*/`)

// SitesAt lists the mutants written where a compile error of the schemata
// build points (the rewritten copy's path, line and column; column 0: anywhere
// on the line): the mutant whose form holds it, or failing that every mutant
// of the rewritten stretch around it.
func (sc Schemata) SitesAt(file string, line, column int) []string {
	text, ok := sc.text[filepath.Base(file)]
	if !ok {
		return nil
	}
	from := offsetOf(text, line, max(column, 1))
	to := from + 1
	if column == 0 {
		to = from + strings.IndexByte(text[from:]+"\n", '\n') + 1
	}
	// The innermost marked form around the error holds it.
	type form struct{ from, to, id int }
	var open, forms []form
	for _, m := range schemataMarker.FindAllStringSubmatchIndex(text, -1) {
		if m[2] >= 0 {
			id, _ := strconv.Atoi(text[m[2]:m[3]])
			open = append(open, form{from: m[0], id: id})
		} else if len(open) > 0 {
			f := open[len(open)-1]
			open = open[:len(open)-1]
			f.to = m[1]
			forms = append(forms, f)
		}
	}
	best := form{id: -1}
	for _, f := range forms {
		if f.from < to && from < f.to && (best.id < 0 || f.to-f.from < best.to-best.from) {
			best = f
		}
	}
	if best.id >= 0 {
		for s, id := range sc.IDs {
			if id == best.id {
				return []string{s}
			}
		}
	}
	var out []string
	for _, s := range sc.spans[filepath.Base(file)] {
		if from < s.to && s.from < to {
			out = append(out, s.sites...)
		}
	}
	return out
}
