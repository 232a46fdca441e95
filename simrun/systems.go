package simrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sut"
)

// registry is the systems this command line runs, in the order they were
// registered; the first is the default of --system.
type registry struct {
	order  []string
	byName map[string]sut.System
}

// systems is set by Run before any command runs.
var systems registry

// register makes systems the ones --system can name.
func register(list []sut.System) error {
	if len(list) == 0 {
		return errors.New("no system registered: call simrun.Main with at least one sut.System")
	}
	r := registry{byName: map[string]sut.System{}}
	for _, s := range list {
		name := s.Name()
		switch {
		case name == "" || strings.ContainsAny(name, " \t\n,/"):
			return fmt.Errorf("system name %q: a name is one word without commas or slashes", name)
		case r.byName[name] != nil:
			return fmt.Errorf("system %q registered twice", name)
		}
		r.order = append(r.order, name)
		r.byName[name] = s
	}
	systems = r
	return nil
}

// defaultSystem is the system --system defaults to: the first registered.
func defaultSystem() string { return systems.order[0] }

// lookupSystem finds a system by name ("" is the default).
func lookupSystem(name string) (sut.System, error) {
	if name == "" {
		name = defaultSystem()
	}
	if s, ok := systems.byName[name]; ok {
		return s, nil
	}
	msg := fmt.Sprintf("unknown system %q (registered: %s)", name, strings.Join(systems.order, ", "))
	if near := nearest(name, systems.order); near != "" {
		msg = fmt.Sprintf("unknown system %q; did you mean %q? (registered: %s)", name, near, strings.Join(systems.order, ", "))
	}
	return nil, errors.New(msg)
}

// systemUsage is the --system flag's help: the registered systems by name.
func systemUsage() string {
	return "system under test, one of: " + strings.Join(systems.order, ", ")
}

// unknownName is the error for a name that is none of known: a near miss
// is offered, and where the list is.
func unknownName(what, name string, known []string) error {
	if near := nearest(name, known); near != "" {
		return fmt.Errorf("unknown %s %q; did you mean %q? (%s list shows them)", what, name, near, progName)
	}
	return fmt.Errorf("unknown %s %q (%s list shows them)", what, name, progName)
}

// scenarioNames and suiteNames are what --scenario and --suite accept.
func scenarioNames() []string {
	var out []string
	for _, sc := range scenarios.All() {
		out = append(out, sc.Name)
	}
	return out
}

func suiteNames() []string {
	var out []string
	for _, s := range scenarios.Suites() {
		out = append(out, s.Name)
	}
	return out
}

// nearest is the candidate within two edits of s, if exactly one is nearest.
func nearest(s string, candidates []string) string {
	best, bestD, tie := "", 3, false
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		switch {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
