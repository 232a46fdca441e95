package kernel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Strategy picks which runnable actor takes the next step. The kernel asks
// it only when two or more actors can run; it draws only from the stream it
// was made with, so a run stays a function of its seed.
type Strategy interface {
	Pick(runnable []*Actor) *Actor
}

// Scheduling names a strategy as data, for a world's configuration and its
// printed options. The zero value is the uniform pick.
type Scheduling struct {
	// Strategy is "uniform" (or "") or "pct".
	Strategy string `json:",omitempty"`
	// Depth is PCT's bug depth d: it installs d-1 priority change points.
	Depth int `json:",omitempty"`
}

// PCTHorizon is how many contested picks PCT draws its change points over:
// about what a release-size seed makes (measured: 8,000-16,000), so a
// change point lands inside most runs.
const PCTHorizon = 12_000

// IsUniform reports whether s is the default pick.
func (s Scheduling) IsUniform() bool { return s.Strategy == "" || s.Strategy == "uniform" }

// String is the strategy as the CLI takes it: "uniform" or "pct:D".
func (s Scheduling) String() string {
	if s.IsUniform() {
		return "uniform"
	}
	return fmt.Sprintf("%s:%d", s.Strategy, s.Depth)
}

// ParseScheduling reads "uniform", "pct" (depth 3) or "pct:D" (D from 1 to 10).
func ParseScheduling(s string) (Scheduling, error) {
	name, depth, hasDepth := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case name == "uniform" && !hasDepth:
		return Scheduling{}, nil
	case name == "pct" && !hasDepth:
		return Scheduling{Strategy: "pct", Depth: 3}, nil
	case name == "pct":
		d, err := strconv.Atoi(depth)
		if err != nil || d < 1 || d > 10 {
			return Scheduling{}, fmt.Errorf("strategy %q: want pct:D with a depth D from 1 to 10", s)
		}
		return Scheduling{Strategy: "pct", Depth: d}, nil
	}
	return Scheduling{}, fmt.Errorf("strategy %q: want uniform, pct or pct:D", s)
}

// New returns the strategy drawing from rng.
func (s Scheduling) New(rng *rand.Rand) Strategy {
	if s.IsUniform() {
		return uniform{rng}
	}
	return newPCT(rng, s.Depth, PCTHorizon)
}

// uniform picks any runnable actor with equal chance.
type uniform struct{ rng *rand.Rand }

func (u uniform) Pick(runnable []*Actor) *Actor { return runnable[u.rng.IntN(len(runnable))] }

// pct is probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010),
// as Coyote's PrioritizationStrategy runs it: every actor gets a random
// priority when first seen, the runnable actor of highest priority runs, and
// at d-1 change points drawn over the horizon the actor about to run drops
// below every other. A bug of depth d is found with probability at least
// 1/(n·k^(d-1)) per run, n actors and k steps. Unlike Coyote, which learns
// the horizon from earlier iterations, each seed stands alone: the horizon is
// fixed, so the change points are a function of the seed.
type pct struct {
	rng      *rand.Rand
	depth    int
	horizon  int
	priority []*Actor // highest first; finished actors are dropped lazily
	known    map[*Actor]bool
	picks    int   // contested picks so far
	changes  []int // picks at which the top actor is demoted, ascending
	mark     uint64
}

func newPCT(rng *rand.Rand, depth, horizon int) *pct {
	p := &pct{rng: rng, depth: depth, horizon: horizon, known: map[*Actor]bool{}}
	p.drawChanges()
	return p
}

// drawChanges draws d-1 distinct change points from the picks still to come.
func (p *pct) drawChanges() {
	p.changes = p.changes[:0]
	left := p.horizon - p.picks
	for len(p.changes) < min(p.depth-1, max(left, 0)) {
		c := p.picks + p.rng.IntN(left)
		if !slices.Contains(p.changes, c) {
			p.changes = append(p.changes, c)
		}
	}
	slices.Sort(p.changes)
}

// reseeded draws the change points still to come again, from the branch's
// stream: the priorities so far stay, what the seed had not yet decided is
// the branch's.
func (p *pct) reseeded() { p.drawChanges() }

func (p *pct) Pick(runnable []*Actor) *Actor {
	p.mark++
	live := p.priority[:0]
	for _, a := range p.priority {
		if a.done {
			delete(p.known, a)
			continue
		}
		live = append(live, a)
	}
	clear(p.priority[len(live):])
	p.priority = live
	for _, a := range runnable {
		a.pickMark = p.mark
		if !p.known[a] {
			p.known[a] = true
			p.priority = slices.Insert(p.priority, p.rng.IntN(len(p.priority)+1), a)
		}
	}
	top := slices.IndexFunc(p.priority, func(a *Actor) bool { return a.pickMark == p.mark })
	if len(p.changes) > 0 && p.changes[0] == p.picks {
		p.changes = p.changes[1:]
		a := p.priority[top]
		p.priority = append(slices.Delete(p.priority, top, top+1), a)
		top = slices.IndexFunc(p.priority, func(a *Actor) bool { return a.pickMark == p.mark })
	}
	p.picks++
	return p.priority[top]
}
