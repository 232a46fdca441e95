package mutants

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

// Coverage is a Go coverage profile of a suite's run over engine/ (`go test
// ./scenarios -run '^TestRelease$' -coverpkg ./engine/... -coverprofile F`):
// which source blocks ran.
type Coverage struct {
	blocks map[string][]coverBlock // by file, "engine/scheduler.go"
}

type coverBlock struct {
	startLine, startCol, endLine, endCol int
	count                                int
}

func (b coverBlock) holds(line, col int) bool {
	after := line > b.startLine || line == b.startLine && col >= b.startCol
	before := line < b.endLine || line == b.endLine && col <= b.endCol
	return after && before
}

// ReadCoverage reads a coverage profile (any mode).
func ReadCoverage(path string) (*Coverage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cv := &Coverage{blocks: map[string][]coverBlock{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 && strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// github.com/x/engine/scheduler.go:62.2,62.9 1 5
		name, rest, ok := strings.Cut(line, ":")
		i := strings.LastIndex(name, "engine/")
		var b coverBlock
		var stmts int
		if _, err := fmt.Sscanf(rest, "%d.%d,%d.%d %d %d", &b.startLine, &b.startCol, &b.endLine, &b.endCol, &stmts, &b.count); !ok || i < 0 || err != nil {
			return nil, fmt.Errorf("%s:%d: not a coverage block: %q", path, n, line)
		}
		file := name[i:]
		cv.blocks[file] = append(cv.blocks[file], b)
	}
	return cv, sc.Err()
}

// Reached reports whether the suite ran the code at file:line:column (src is
// the file's source). The cover tool counts statement blocks, and a switch
// case's expression lies in none (the case's block starts after its colon),
// so a tool that maps positions to blocks calls it never reached; it is
// evaluated whenever its switch runs, so it counts as reached then.
func (cv *Coverage) Reached(file string, src []byte, line, col int) bool {
	if ran, inBlock := cv.ran(file, line, col); inBlock {
		return ran
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		return false
	}
	reached := false
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch s := n.(type) {
		case *ast.SwitchStmt:
			body = s.Body
		case *ast.TypeSwitchStmt:
			body = s.Body
		default:
			return !reached
		}
		for _, st := range body.List {
			cc := st.(*ast.CaseClause)
			for _, e := range cc.List {
				from, to := fset.Position(e.Pos()), fset.Position(e.End())
				if (line > from.Line || line == from.Line && col >= from.Column) && (line < to.Line || line == to.Line && col < to.Column) {
					at := fset.Position(n.Pos())
					reached, _ = cv.ran(file, at.Line, at.Column)
				}
			}
		}
		return !reached
	})
	return reached
}

// ran reports whether a block holding the position ran, and whether any
// block holds it at all.
func (cv *Coverage) ran(file string, line, col int) (ran, inBlock bool) {
	for _, b := range cv.blocks[file] {
		if b.holds(line, col) {
			inBlock = true
			ran = ran || b.count > 0
		}
	}
	return ran, inBlock
}
