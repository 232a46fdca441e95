package faults

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
)

// Injector decides faults for one run: from Options and a seed (New), or from a
// recorded plan (Replay). It implements sim.Injector and sim.WorldSetup, and
// records the plan of what it fired. An Injector serves one run.
type Injector struct {
	opts   Options
	seed   uint64
	replay bool
	source Plan // Replay: the plan being replayed

	active  []activeKind // AtPoint kinds asked at each point, catalog order
	windows []activeWindow
	// byPoint are the indexes in active of the kinds of each point kind, in
	// catalog order: a kind of another point kind never applies.
	byPoint map[sim.PointKind][]int
	world   *sim.World

	seen    map[pointID]int // occurrences so far, per (point kind, group, target)
	planned map[pointKey]int
	matched []bool

	entries []PlanEntry
	stats   map[string]*KindStats
	spent   struct{ total, replicaCrashes, replicaPauses, workerCrashes int }

	skews       []time.Duration // handed out by ReplicaSkew
	skewsHanded bool

	branch sim.Branch // the branch the run forked into, if any
}

type activeKind struct {
	kind Kind
	ko   KindOptions
	rng  *rand.Rand
	st   *KindStats // in.stat(kind.Name), once asked
}

type activeWindow struct {
	kind  Kind
	entry PlanEntry
	st    *KindStats // in.stat(kind.Name), once asked
}

type pointID struct {
	point         sim.PointKind
	group, target string
}

// KindStats is what one kind saw in a run: the points where its availability
// filter held (before probability, windows and budget), and how often it fired
// (for a window kind: the points inside its window; for a setup kind: the
// setup faults applied).
type KindStats struct {
	Kind     string
	Eligible int
	Fired    int
}

var (
	_ sim.Injector       = (*Injector)(nil)
	_ sim.WorldSetup     = (*Injector)(nil)
	_ sim.BranchInjector = (*Injector)(nil)
)

// New returns an injector that draws faults from opts with the given seed.
// Invalid options are a programmer error and panic; check them first with
// Options.Validate when they come from outside.
func New(opts Options, seed uint64) *Injector {
	if err := opts.Validate(); err != nil {
		panic("faults: " + err.Error())
	}
	in := newInjector(opts.withDefaults(), seed)
	for _, k := range Catalog() {
		if ko, on := in.opts.Kinds[k.Name]; on && k.Timing == AtPoint {
			in.active = append(in.active, activeKind{kind: k, ko: ko, rng: kindRand(seed, k.Name)})
		}
	}
	return in
}

// Replay returns an injector that fires exactly the plan's point faults at
// their (point kind, group, target, occurrence), its windows, and its setup
// faults, and nothing else. No budget applies.
func Replay(plan Plan) *Injector {
	var opts Options
	for _, e := range plan.Entries {
		k, ok := Lookup(e.Kind)
		if !ok {
			panic(fmt.Sprintf("faults: replay of a plan naming unknown kind %q (decode plans with DecodePlan)", e.Kind))
		}
		opts = opts.Enable(k, KindOptions{})
	}
	in := newInjector(opts.withDefaults(), plan.Seed)
	in.replay, in.source = true, plan
	in.planned = map[pointKey]int{}
	in.matched = make([]bool, len(plan.Entries))
	for i, e := range plan.Entries {
		if !e.Setup {
			in.planned[planKey(e)] = i
		}
	}
	for _, k := range Catalog() {
		if _, on := in.opts.Kinds[k.Name]; on && k.Timing == AtPoint {
			in.active = append(in.active, activeKind{kind: k})
		}
	}
	return in
}

func newInjector(opts Options, seed uint64) *Injector {
	return &Injector{opts: opts, seed: seed, seen: map[pointID]int{}, stats: map[string]*KindStats{}}
}

// Options are the injector's options with defaults filled in (for a replay:
// the kinds the plan names).
func (in *Injector) Options() Options { return in.opts }

// Seed is the seed the injector draws from (a replay: the plan's).
func (in *Injector) Seed() uint64 { return in.seed }

func (in *Injector) stat(name string) *KindStats {
	s, ok := in.stats[name]
	if !ok {
		s = &KindStats{Kind: name}
		in.stats[name] = s
	}
	return s
}

// ReplicaSkew returns the clock skew of each of n replicas, to pass as
// sim.Config.ReplicaSkew: the world reads skews only when it is built, so
// ClockSkew cannot apply them in SetupWorld. Replica i's skew does not depend
// on n. Without ClockSkew every skew is zero. A replay returns the plan's.
func (in *Injector) ReplicaSkew(n int) []time.Duration {
	out := make([]time.Duration, n)
	if in.replay {
		for _, e := range in.source.Entries {
			if i, ok := replicaIndex(e.Group); ok && e.Kind == ClockSkew.Name && i < n {
				out[i] = time.Duration(e.SkewMs) * time.Millisecond
			}
		}
	} else if ko, on := in.opts.Kinds[ClockSkew.Name]; on {
		for i := range out {
			out[i] = drawSkew(in.seed, i, ko)
		}
	}
	in.skews, in.skewsHanded = out, true
	return append([]time.Duration(nil), out...)
}

// SetupWorld draws (or, replaying, takes from the plan) the run's windows and
// setup faults and applies them. The simulator calls it once, before anything
// runs.
func (in *Injector) SetupWorld(w *sim.World) {
	if in.world != nil {
		panic("faults: an Injector serves one run; make a new one (or a new Replay) per run")
	}
	in.world = w
	var entries []PlanEntry
	if in.replay {
		for _, e := range in.source.Entries {
			if e.Setup {
				entries = append(entries, e)
			}
		}
	} else {
		for _, k := range Catalog() {
			ko, on := in.opts.Kinds[k.Name]
			if !on || k.Timing == AtPoint {
				continue
			}
			rng := kindRand(in.seed, k.Name)
			if k.Timing == Window {
				entries = append(entries, in.drawWindow(w, k, ko, rng)...)
			} else {
				entries = append(entries, k.draw(in, w, ko, rng)...)
			}
		}
	}
	for _, e := range entries {
		k, _ := Lookup(e.Kind)
		in.entries = append(in.entries, e)
		if k.Timing == Window {
			in.windows = append(in.windows, activeWindow{kind: k, entry: e})
			continue
		}
		k.apply(in, w, e)
		in.stat(k.Name).Fired++
	}
}

// drawWindow draws whether the kind's window happens, its length (capped by
// the budget) and its start inside the fault phase, and the group it is
// confined to when the kind names some.
func (in *Injector) drawWindow(w *sim.World, k Kind, ko KindOptions, rng *rand.Rand) []PlanEntry {
	happens := rng.Float64() < ko.Probability
	length := drawMs(rng, ko.DurationMsMin, ko.DurationMsMax)
	latest := max(ms(w.Config().FaultPhase)-length, 0)
	start := drawMs(rng, 0, latest)
	group := ""
	if k.windowGroups != nil {
		groups := k.windowGroups(w)
		if len(groups) == 0 {
			return nil
		}
		group = groups[rng.IntN(len(groups))]
	}
	if !happens || length <= 0 {
		return nil
	}
	return []PlanEntry{{Kind: k.Name, Effect: k.Effect, Point: k.Point, Group: group, Setup: true,
		StartMs: start, DurationMs: length}}
}

// At decides the fault at p: a window covering p first, then (recording) each
// AtPoint kind in catalog order whose filter holds, within the budget, with its
// probability, or (replaying) the plan's entry for p's identity.
func (in *Injector) At(p *sim.Point) (sim.Fault, bool) {
	id := pointID{p.Kind, p.Group, Target(p)}
	occ := in.seen[id]
	in.seen[id] = occ + 1
	var chosen *PlanEntry

	for i := range in.windows {
		win := &in.windows[i] // a Kind is large: not copied per point
		if !win.kind.Applies(p) || win.entry.Group != "" && win.entry.Group != p.Group {
			continue
		}
		if win.st == nil {
			win.st = in.stat(win.kind.Name)
		}
		st := win.st
		st.Eligible++
		start := time.Duration(win.entry.StartMs) * time.Millisecond
		end := start + time.Duration(win.entry.DurationMs)*time.Millisecond
		if chosen == nil && p.Time >= start && p.Time < end {
			st.Fired++
			chosen = &PlanEntry{Kind: win.kind.Name, Effect: win.entry.Effect, Also: win.kind.Also, Point: p.Kind,
				Group: p.Group, Target: id.target, Occurrence: occ, Step: p.Step}
		}
	}
	// A window's points are not plan entries: the window is, and replays them.
	fromWindow := chosen != nil

	if in.byPoint == nil {
		in.byPoint = map[sim.PointKind][]int{}
		for i, ak := range in.active {
			in.byPoint[ak.kind.Point] = append(in.byPoint[ak.kind.Point], i)
		}
	}
	for _, i := range in.byPoint[p.Kind] {
		ak := &in.active[i]
		if !ak.kind.Applies(p) {
			continue
		}
		if ak.st == nil {
			ak.st = in.stat(ak.kind.Name)
		}
		ak.st.Eligible++
		if chosen != nil || in.replay || !in.budgetAllows(ak) || ak.rng.Float64() >= in.probability(ak, p) {
			continue
		}
		e := PlanEntry{Kind: ak.kind.Name, Effect: ak.kind.Effect, Also: ak.kind.Also, Point: p.Kind, Group: p.Group,
			Target: id.target, Occurrence: occ, Step: p.Step}
		if ak.ko.DurationMsMax > 0 {
			e.DurationMs = drawMs(ak.rng, ak.ko.DurationMsMin, ak.ko.DurationMsMax)
		}
		in.spend(&ak.kind)
		chosen = &e
	}
	if in.replay && chosen == nil {
		if i, ok := in.planned[pointKey{p.Kind, p.Group, id.target, occ}]; ok {
			e := in.source.Entries[i]
			e.Step = p.Step
			in.matched[i] = true
			chosen = &e
		}
	}
	if chosen == nil {
		return sim.Fault{}, false
	}
	if !fromWindow {
		in.entries = append(in.entries, *chosen)
		in.stat(chosen.Kind).Fired++
	}
	return planFault(*chosen), true
}

func (in *Injector) budgetAllows(ak *activeKind) bool {
	b := in.opts.Budget
	perKind := b.PerKindMax
	if ak.ko.CountMax > 0 {
		perKind = ak.ko.CountMax
	}
	if !allows(b.FaultsMax, in.spent.total) || !allows(perKind, in.stat(ak.kind.Name).Fired) {
		return false
	}
	switch ak.kind.class {
	case classReplicaCrash:
		return allows(b.ReplicaCrashesMax, in.spent.replicaCrashes)
	case classReplicaPause:
		return allows(b.ReplicaPausesMax, in.spent.replicaPauses)
	case classWorkerCrash:
		return allows(b.WorkerCrashesMax, in.spent.workerCrashes)
	}
	return true
}

func (in *Injector) spend(k *Kind) {
	in.spent.total++
	switch k.class {
	case classReplicaCrash:
		in.spent.replicaCrashes++
	case classReplicaPause:
		in.spent.replicaPauses++
	case classWorkerCrash:
		in.spent.workerCrashes++
	}
}

// A focused branch multiplies the probability of each point kind at the
// points of its job, up to a ceiling that leaves the job a chance to get
// through: the second event a defect needs after the moment of the fork is
// then likely within a few branches, not a few hundred.
const (
	focusBoost   = 20
	focusCeiling = 0.5
)

// probability is ak's chance at p: its own, or boosted at the focused job's
// points in a focused branch.
func (in *Injector) probability(ak *activeKind, p *sim.Point) float64 {
	job := in.branch.Focus
	if job == "" || p.JobID != job && p.Fact.JobID != job {
		return ak.ko.Probability
	}
	return max(ak.ko.Probability, min(ak.ko.Probability*focusBoost, focusCeiling))
}

// Fork reseeds the kinds' streams for branch b (sim.BranchInjector): the
// point faults drawn from here on are the branch's. A replay draws nothing.
func (in *Injector) Fork(b sim.Branch) {
	in.branch = b
	for i, ak := range in.active {
		if ak.rng != nil {
			in.active[i].rng = rand.New(rand.NewPCG(sim.StreamSeed(in.seed, kindStream(ak.kind.Name), b)))
		}
	}
}

// Plan is what fired so far: setup faults and windows, then point faults in
// the order they fired.
func (in *Injector) Plan() Plan {
	return Plan{Version: PlanVersion, Seed: in.seed, Branch: in.branch.String(),
		Entries: append([]PlanEntry(nil), in.entries...)}
}

// Missed lists the indices of a replayed plan's point entries whose point never
// came: the run went elsewhere (shrinking removed what led there).
func (in *Injector) Missed() []int {
	var out []int
	for i, e := range in.source.Entries {
		if !e.Setup && !in.matched[i] {
			out = append(out, i)
		}
	}
	return out
}

// Stats is what each kind that is on (or fired) saw, in catalog order.
func (in *Injector) Stats() []KindStats {
	var out []KindStats
	for _, k := range Catalog() {
		s, seen := in.stats[k.Name]
		_, on := in.opts.Kinds[k.Name]
		switch {
		case seen:
			out = append(out, *s)
		case on:
			out = append(out, KindStats{Kind: k.Name})
		}
	}
	return out
}

// Fired counts how often each kind fired (kinds that never fired are absent).
func (in *Injector) Fired() map[string]int {
	out := map[string]int{}
	for name, s := range in.stats {
		if s.Fired > 0 {
			out[name] = s.Fired
		}
	}
	return out
}
