package faults

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// KindOptions are one kind's knobs, in pairs: how often, and for how long.
// Zero values take the kind's Defaults.
type KindOptions struct {
	// Probability is the chance the kind fires at each eligible point (AtPoint
	// kinds), the chance its window happens in a run (Window kinds), or the
	// chance of the setup fault (Setup kinds; ClockSkew: per replica).
	Probability float64
	// DurationMsMin and DurationMsMax bound what the kind draws: the delay or
	// pause of AtPoint kinds, the window length of Window kinds, how long a pool
	// mapping stays missing, the magnitude of a clock skew. Unused by kinds
	// without a duration.
	DurationMsMin int64
	DurationMsMax int64
	// CountMax caps how often an AtPoint kind fires in a run (0: Budget.PerKindMax).
	CountMax int
}

// Budget keeps a plan survivable, so that a liveness failure means an engine
// bug rather than a world that could never recover. Zero values mean the
// defaults noted; a negative value means no cap.
type Budget struct {
	// FaultsMax caps AtPoint faults in a run, every kind together (100).
	// Points inside a window do not count: the window's length bounds them.
	FaultsMax int
	// PerKindMax caps each AtPoint kind (25), unless its CountMax says otherwise.
	PerKindMax int
	// ReplicaCrashesMax caps replica crashes, every crash kind together (2).
	// Crashed replicas restart after sim.Config.ReplicaRestartAfter.
	ReplicaCrashesMax int
	// ReplicaPausesMax caps replica pauses (2).
	ReplicaPausesMax int
	// WorkerCrashesMax caps worker crashes (3).
	WorkerCrashesMax int
	// WindowMsMax caps every window's length (60000): no permanent outage.
	WindowMsMax int64
}

func (b Budget) withDefaults() Budget {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&b.FaultsMax, 100)
	def(&b.PerKindMax, 25)
	def(&b.ReplicaCrashesMax, 2)
	def(&b.ReplicaPausesMax, 2)
	def(&b.WorkerCrashesMax, 3)
	if b.WindowMsMax == 0 {
		b.WindowMsMax = 60_000
	}
	return b
}

// allows reports whether count more of something is within cap (negative: no cap).
func allows(cap, count int) bool { return cap < 0 || count < cap }

// Options say which kinds are on and how they behave. The zero value injects
// nothing.
type Options struct {
	// Kinds turns kinds on by name; a kind not listed is off. Zero fields of
	// its KindOptions take the kind's Defaults.
	Kinds map[string]KindOptions
	// Budget caps what fires; zero fields take their defaults.
	Budget Budget
}

// Enable turns kind k on with ko (zero fields: defaults) and returns o.
func (o Options) Enable(k Kind, ko KindOptions) Options {
	kinds := make(map[string]KindOptions, len(o.Kinds)+1)
	for name, v := range o.Kinds {
		kinds[name] = v
	}
	kinds[k.Name] = ko
	o.Kinds = kinds
	return o
}

// Only returns options with exactly the given kinds on, at their defaults.
func Only(kinds ...Kind) Options {
	var o Options
	for _, k := range kinds {
		o = o.Enable(k, KindOptions{})
	}
	return o
}

// Validate reports unknown kind names and knobs out of range.
func (o Options) Validate() error {
	names := make([]string, 0, len(o.Kinds))
	for name := range o.Kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ko := o.Kinds[name]
		if _, ok := Lookup(name); !ok {
			return fmt.Errorf("fault kind %q is not in the catalog", name)
		}
		switch {
		case ko.Probability < 0 || ko.Probability > 1 || math.IsNaN(ko.Probability):
			return fmt.Errorf("fault kind %s: probability %v is outside [0, 1]", name, ko.Probability)
		case ko.DurationMsMin < 0 || ko.DurationMsMax < 0:
			return fmt.Errorf("fault kind %s: negative duration", name)
		case ko.DurationMsMax > 0 && ko.DurationMsMin > ko.DurationMsMax:
			return fmt.Errorf("fault kind %s: DurationMsMin %d > DurationMsMax %d", name, ko.DurationMsMin, ko.DurationMsMax)
		case ko.CountMax < 0:
			return fmt.Errorf("fault kind %s: negative CountMax", name)
		}
	}
	return nil
}

// withDefaults fills every zero knob: the kinds' defaults and the budget's. It
// copies the Kinds map; the caller's is never changed.
func (o Options) withDefaults() Options {
	kinds := make(map[string]KindOptions, len(o.Kinds))
	for name, ko := range o.Kinds {
		k, _ := Lookup(name)
		d := k.Defaults
		if ko.Probability == 0 {
			ko.Probability = d.Probability
		}
		if ko.DurationMsMin == 0 && ko.DurationMsMax == 0 {
			ko.DurationMsMin, ko.DurationMsMax = d.DurationMsMin, d.DurationMsMax
		}
		if ko.DurationMsMax < ko.DurationMsMin {
			ko.DurationMsMax = ko.DurationMsMin
		}
		if ko.CountMax == 0 {
			ko.CountMax = d.CountMax
		}
		kinds[name] = ko
	}
	o.Kinds = kinds
	o.Budget = o.Budget.withDefaults()
	b := o.Budget
	for name, ko := range o.Kinds {
		if k, _ := Lookup(name); k.Timing == Window && b.WindowMsMax > 0 {
			ko.DurationMsMin = min(ko.DurationMsMin, b.WindowMsMax)
			ko.DurationMsMax = min(ko.DurationMsMax, b.WindowMsMax)
			o.Kinds[name] = ko
		}
	}
	return o
}

// Summary lists the options with defaults filled in, one kind per line in
// catalog order, then the budget: for a run header that names every option
// drawn from the seed.
func (o Options) Summary() []string {
	if o.Validate() == nil {
		o = o.withDefaults()
	}
	var out []string
	for _, k := range Catalog() {
		ko, on := o.Kinds[k.Name]
		if !on {
			continue
		}
		line := fmt.Sprintf("%s p=%.4g", k.Name, ko.Probability)
		if ko.DurationMsMax > 0 {
			line += fmt.Sprintf(" duration_ms=[%d,%d]", ko.DurationMsMin, ko.DurationMsMax)
		}
		if ko.CountMax > 0 {
			line += fmt.Sprintf(" count_max=%d", ko.CountMax)
		}
		out = append(out, line)
	}
	b := o.Budget
	out = append(out, fmt.Sprintf("budget faults_max=%d per_kind_max=%d replica_crashes_max=%d replica_pauses_max=%d worker_crashes_max=%d window_ms_max=%d",
		b.FaultsMax, b.PerKindMax, b.ReplicaCrashesMax, b.ReplicaPausesMax, b.WorkerCrashesMax, b.WindowMsMax))
	return out
}

// String is the summary on one line.
func (o Options) String() string { return strings.Join(o.Summary(), "; ") }

// Swarm draws which kinds are on for one seed and how often they fire, like
// TigerBeetle's options_swarm: each kind is on with its swarm chance (one half
// for most), and an AtPoint kind's probability is drawn log-uniformly between
// 1/32 of its default and its default. Every kind makes the same two draws
// whether it ends up on or not, so one kind's draws never shift another's.
// Window and Setup kinds that are on always happen (probability 1). The budget
// is left at its defaults.
//
// Kinds added since seeds were pinned (swarmAppended) draw after the others,
// so the earlier kinds' draws, and with them the pinned seeds, stay put.
func Swarm(rng *rand.Rand) Options {
	var o Options
	for _, k := range swarmOrder() {
		on := rng.Float64() < k.swarmChance
		scale := rng.Float64()
		if !on {
			continue
		}
		ko := KindOptions{Probability: 1}
		if k.Timing == AtPoint {
			ko.Probability = k.Defaults.Probability * math.Exp2(-5*scale)
		}
		o = o.Enable(k, ko)
	}
	return o
}

// Rarer scales the probability of every AtPoint kind that is on by f (0 < f
// <= 1): a world whose faults are as rare as production's, where a defect
// that needs two faults in a row is rare too. Window and Setup kinds are left
// as they are: they happen once a run, when they are on.
func (o Options) Rarer(f float64) Options {
	for _, name := range slices.Sorted(maps.Keys(o.Kinds)) {
		k, ok := registry[name]
		if !ok || k.Timing != AtPoint {
			continue
		}
		ko := o.Kinds[name]
		if ko.Probability == 0 {
			ko.Probability = k.Defaults.Probability
		}
		ko.Probability *= f
		o = o.Enable(k, ko)
	}
	return o
}

// swarmAppended are the kinds that joined the swarm after its seeds were
// pinned, in the order they joined.
var swarmAppended = []string{"CancelWriteFails", "LockRenewalFails", "StatusReadFails", "WorkerResultPublishFails",
	"WorkerStoreFails", "WorkerStoreReplyLost"}

// swarmOrder is the catalog in the order Swarm draws it: by name, then the
// appended kinds.
func swarmOrder() []Kind {
	var out, late []Kind
	for _, k := range Catalog() {
		if !slices.Contains(swarmAppended, k.Name) && k.swarmChance >= 0 {
			out = append(out, k)
		}
	}
	for _, name := range swarmAppended {
		late = append(late, registry[name])
	}
	return append(out, late...)
}
