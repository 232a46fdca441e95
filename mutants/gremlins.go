package mutants

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Gremlins is the mutation tool whose mechanical mutants of engine/ measure
// the harness: `go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0`.
const Gremlins = "gremlins v0.6.0"

// gremlinsReport is the part of gremlins' --output file the harness reads.
type gremlinsReport struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// gremlinsReplacements is the tool's own token replacement per mutator type
// (its internal/engine/mappings.go), for the types `unleash` runs by default
// plus INVERT_LOGICAL. The tool chooses the sites; this only re-applies its
// choice, so the release suite, not `go test`, judges each mutant.
var gremlinsReplacements = map[string]map[string]string{
	"ARITHMETIC_BASE":       {"+": "-", "*": "/", "/": "*", "%": "*", "-": "+"},
	"CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
	"CONDITIONALS_NEGATION": {"==": "!=", ">=": "<", ">": "<=", "<=": ">", "<": ">=", "!=": "=="},
	"INCREMENT_DECREMENT":   {"--": "++", "++": "--"},
	"INVERT_NEGATIVES":      {"-": "+"},
	"INVERT_LOGICAL":        {"&&": "||", "||": "&&"},
}

// operators longest first, so "<=" is not read as "<".
var operators = []string{"&&", "||", "==", "!=", ">=", "<=", "++", "--", "+", "-", "*", "/", "%", ">", "<"}

// Gremlin is one tool mutant with the status gremlins gave it.
type Gremlin struct {
	Mutant
	Site       string // file:line:column TYPE, the key equivalent.txt uses
	Mutator    string // the TYPE: CONDITIONALS_NEGATION, INVERT_LOGICAL, ...
	ToolStatus string // KILLED, LIVED, NOT COVERED, NOT VIABLE, TIMED OUT, RUNNABLE (dry run)
}

// ReadGremlins turns a gremlins --output file over engine/ into mutants.
// root is the module root.
func ReadGremlins(path, root string) ([]Gremlin, error) { return ReadGremlinsOf(path, root, "engine") }

// ReadGremlinsOf turns a gremlins --output file over the package in dir (a
// slash path from the module root) into mutants; the report names files
// relative to dir.
func ReadGremlinsOf(path, root, dir string) ([]Gremlin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep gremlinsReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: not a gremlins report: %w", path, err)
	}
	var out []Gremlin
	for _, f := range rep.Files {
		file := filepath.ToSlash(f.Name)
		if !strings.HasPrefix(file, dir+"/") {
			file = dir + "/" + file
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, m := range f.Mutations {
			site := fmt.Sprintf("%s:%d:%d %s", file, m.Line, m.Column, m.Type)
			at := offsetOf(string(src), m.Line, m.Column)
			if at < 0 {
				return nil, fmt.Errorf("%s: %s is outside the file", path, site)
			}
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(string(src[at:]), o) {
					op = o
					break
				}
			}
			to, ok := gremlinsReplacements[m.Type][op]
			if !ok {
				return nil, fmt.Errorf("%s: %s: no replacement for %q", path, site, op)
			}
			out = append(out, Gremlin{Site: site, Mutator: m.Type, ToolStatus: m.Status, Mutant: Mutant{
				Name:        site,
				Origin:      Gremlins,
				Description: fmt.Sprintf("%s: %q becomes %q", m.Type, op, to),
				Edits:       []Edit{{File: file, From: op, To: to, Line: m.Line, Column: m.Column}},
			}})
		}
	}
	return out, nil
}

// ReadEquivalent reads the triage file: one mutant a line, its site
// (file:line:column TYPE), a tab, and why no run can tell it from the engine.
// Lines starting with # are comments.
func ReadEquivalent(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		site, reason, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: want site<TAB>reason", path, n)
		}
		out[strings.TrimSpace(site)] = strings.TrimSpace(reason)
	}
	return out, sc.Err()
}
