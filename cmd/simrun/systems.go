package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

// defaultSystem is the system --system defaults to: our engine.
const defaultSystem = "cordum"

// systems are the systems simrun can run, by name.
var systems = map[string]sut.System{
	cordum.System{}.Name(): cordum.System{},
	outbox.System{}.Name(): outbox.System{},
}

// lookupSystem finds a system by name ("" is the default).
func lookupSystem(name string) (sut.System, error) {
	if name == "" {
		name = defaultSystem
	}
	if s, ok := systems[name]; ok {
		return s, nil
	}
	names := make([]string, 0, len(systems))
	for n := range systems {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown system %q (known: %s)", name, strings.Join(names, ", "))
}

const systemUsage = "system under test: cordum (engine/) or outbox (systems/outbox/dispatch)"
