package faults

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Timing says when a kind decides.
type Timing string

// The timings of a kind.
const (
	// AtPoint kinds decide at each eligible fault point, with their Probability.
	AtPoint Timing = "point"
	// Window kinds draw a window [start, end) when the world is set up; every
	// eligible point inside it gets the kind's effect.
	Window Timing = "window"
	// Setup kinds shape the world before it runs (clock skew, routing).
	Setup Timing = "setup"
)

// budgetClass groups kinds that share a budget cap beyond the per-kind one.
type budgetClass int

const (
	classNone budgetClass = iota
	classReplicaCrash
	classReplicaPause
	classWorkerCrash
)

// Kind is one fault of the catalog.
type Kind struct {
	// Name follows <Component><Before|After><Event><Effect> where it reads well.
	Name        string
	Description string
	Timing      Timing
	// Point is the fault point the kind fires at ("" for setup kinds that act
	// on the world directly).
	Point sim.PointKind
	// Effect is what the simulator does when the kind fires ("" for setup
	// kinds that act on the world directly); Also are further effects at the
	// same point, in order.
	Effect sim.Effect
	Also   []sim.Effect
	// Defaults are the knobs a kind gets when it is turned on with zero values.
	Defaults KindOptions

	applies func(p *sim.Point) bool
	// hint says what must happen for the kind to fire, naming the spec
	// field or adapter hook that decides it ("": the point's own, FiresAt).
	hint string
	// needs says which systems have the kind's fault point at all (zero:
	// all); a kind a system cannot reach is not declared for it.
	needs need
	class budgetClass
	// swarmChance is the chance Swarm turns the kind on (0: one half); a
	// kind with a negative chance is not drawn by the swarms at all, only
	// declared by the scenarios that need it.
	swarmChance float64
	// perWrite marks a kind drawn at each of a replica's store commands, at a
	// rate set for as many as Cordum's engine makes (FitRates).
	perWrite bool
	// setup kinds: draw the run's entries (record mode) and apply one entry
	// (record and replay alike).
	draw  func(in *Injector, w *sim.World, ko KindOptions, rng *rand.Rand) []PlanEntry
	apply func(in *Injector, w *sim.World, e PlanEntry)
	// window kinds: the groups a window may be confined to (nil: every group).
	windowGroups func(w *sim.World) []string
}

// notYetSwarmed is the swarm chance of a kind that joined the catalog after
// the swarms' seeds were pinned and would move them: turned on in a pinned
// swarm seed it changes the run the seed was pinned for (with the client
// kinds on, world-swarm 502183 stopped killing
// republish-outside-dedup-window). Such a kind joins the swarms with those
// seeds re-pinned; the scenarios that need it declare it meanwhile.
const notYetSwarmed = -1

// Applies reports whether the kind may fire at p: the availability filter. It
// says nothing about probability, windows or the budget.
func (k Kind) Applies(p *sim.Point) bool {
	return k.applies != nil && p != nil && p.Kind == k.Point && k.applies(p)
}

// FiresAt says what must happen for the kind to fire, and which spec field
// or adapter hook decides whether it can: the lead a never-fired kind gives.
func (k Kind) FiresAt() string {
	if k.hint != "" {
		return k.hint
	}
	switch k.Timing {
	case Setup:
		return "the world's setup, when the kind is on (it fires whenever its world is drawn with it)"
	case Window:
		return "every eligible point inside a window drawn at setup: " + pointWords[k.Point]
	}
	return pointWords[k.Point]
}

// pointWords say, per fault point, what the simulator must see for a kind
// there to fire, and what the adapter says of it.
var pointWords = map[sim.PointKind]string{
	sim.PointRedis:   "a store command of the actors the kind aims at (Observer.Command says what each command does)",
	sim.PointPublish: "a publish of a job's message (Observer.Message names the job; heartbeats are not job traffic)",
	sim.PointDeliver: "a delivery of a job's message to a replica's handler (sut.Replica's subscriptions)",
	sim.PointAck:     "a handler settling a job's message (sut.Handler's Settle)",
	sim.PointWorker:  "a worker finishing a dispatch it decoded (WorkerProtocol.DecodeDispatch)",
	sim.PointClient:  "a client's submit the gateway applied (Gateway.Submit returning nil)",
}

// AppliesTo reports whether a system with spec s has the kind's fault point.
func (k Kind) AppliesTo(s sut.Spec) bool { return k.needs.has == nil || k.needs.has(s) }

// Needs names what a system must have for the kind to apply ("" for every
// system): why AppliesTo says no.
func (k Kind) Needs() string { return k.needs.what }

// need is a fault point some systems lack: which, read from the spec, and
// what it is, in words.
type need struct {
	has  func(s sut.Spec) bool
	what string
}

// Which systems have which fault points, from their specs.
var (
	needRollback = need{func(s sut.Spec) bool { return s.Allowed(s.Dispatched, s.Scheduled) },
		"a rollback from the dispatched state to the scheduled one"}
	needJobLock   = need{func(s sut.Spec) bool { return s.JobLock }, "a job lock"}
	needAdmission = need{func(s sut.Spec) bool { return s.RunAdmission }, "run admission"}
	needRunning   = need{func(s sut.Spec) bool { return s.Running != "" }, "a running state (the spec's Running role)"}
	// Only a worker with a dispatch gate talks to the store, and only one
	// that claims what it runs writes there.
	needWorkerStore = need{func(s sut.Spec) bool { return s.WorkerGate != sut.GateNone },
		"a worker dispatch gate in the store"}
	needWorkerClaim = need{func(s sut.Spec) bool { return s.WorkerGate == sut.GateClaim },
		"a worker dispatch gate that claims in the store"}
	// A late retry is aimed inside the window a system promises; a system
	// that promises none has no such promise to exercise.
	needSubmitDedup = need{func(s sut.Spec) bool { return s.SubmitDedupWindow > 0 },
		"a submit de-duplication window (the spec's SubmitDedupWindow)"}
	// Replicas of a system whose workers pull publish only what they
	// announce besides dispatches.
	needReplicaPublishes = need{func(s sut.Spec) bool { return !s.WorkersPull || s.DLQSubject != "" },
		"replicas that publish (dispatches, or DLQ announcements)"}
	// A gateway that writes cancels itself leaves no replica cancel write to fail.
	needReplicaCancels = need{func(s sut.Spec) bool { return s.Cancels == sut.CancelByReplica && s.Cancelled != "" },
		"cancels written by a replica"}
)

// PerWrite reports whether the kind is drawn at each of a replica's store
// commands, so that how often it fires in a run follows how much the system
// writes.
func (k Kind) PerWrite() bool { return k.perWrite }

// ReferenceWritesPerJob is the replica writes per job the per-write kinds'
// rates were set for: Cordum's engine, 303 writes for lock-expiry's 30 jobs.
const ReferenceWritesPerJob = 10

// FitRates scales the rate of every per-write kind o turns on to a system
// that writes less than the reference (s.ReplicaWritesPerJob below
// ReferenceWritesPerJob): probability times reference over the system's
// writes, at most 1, so the kind has about as many chances to fire in a run
// as it has against Cordum. A system that writes as much or more, or does not
// say, keeps o as it is (the same draws, the same runs).
func FitRates(o Options, s sut.Spec) Options {
	w := s.ReplicaWritesPerJob
	if w <= 0 || w >= ReferenceWritesPerJob {
		return o
	}
	for _, k := range Catalog() {
		ko, on := o.Kinds[k.Name]
		if !on || !k.perWrite {
			continue
		}
		p := ko.Probability
		if p == 0 {
			p = k.Defaults.Probability
		}
		ko.Probability = min(1, p*float64(ReferenceWritesPerJob)/float64(w))
		o = o.Enable(k, ko)
	}
	return o
}

var registry = map[string]Kind{}

// register adds a kind to the catalog; each kind's file calls it once.
func register(k Kind) Kind {
	if _, dup := registry[k.Name]; dup {
		panic("faults: kind registered twice: " + k.Name)
	}
	if k.swarmChance == 0 {
		k.swarmChance = 0.5
	}
	if k.Timing != Setup && k.applies == nil {
		panic("faults: kind without an availability filter: " + k.Name)
	}
	registry[k.Name] = k
	return k
}

// Catalog lists every kind, sorted by name. The order is also the order in
// which kinds are asked at a point, so it is part of determinism.
func Catalog() []Kind {
	out := make([]Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a kind by name.
func Lookup(name string) (Kind, bool) {
	k, ok := registry[name]
	return k, ok
}

// kindRand is the kind's own PRNG stream: turning another kind on or off does
// not shift this kind's draws.
func kindRand(seed uint64, name string) *rand.Rand {
	return rand.New(rand.NewPCG(sim.StreamSeed(seed, kindStream(name), sim.Branch{})))
}

// kindStream names a kind's stream in the seed tree.
func kindStream(name string) string { return "faults/" + name }

// drawMs draws a whole number of milliseconds in [lo, hi].
func drawMs(rng *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + rng.Int64N(hi-lo+1)
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Where things run. Groups are the simulator's: "replica-N", "worker-<id>",
// "clients" (gateway clients, which reach the store through the engine's
// JobStore) and "gateway".
func isReplica(group string) bool { return strings.HasPrefix(group, "replica-") }
func isWorker(group string) bool  { return strings.HasPrefix(group, "worker-") }
func isGateway(group string) bool { return group == "clients" || group == "gateway" }

// isStoreUser reports whether group's store commands are engine code: the
// scheduler replicas and the gateway's job store.
func isStoreUser(group string) bool { return isReplica(group) || isGateway(group) }

// replicaIndex parses "replica-N" into N-1.
func replicaIndex(group string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(group, "replica-"))
	if !isReplica(group) || err != nil || n < 1 {
		return 0, false
	}
	return n - 1, true
}

// isJobTraffic is any bus point but worker heartbeats, which have their own kind.
func isJobTraffic(p *sim.Point) bool { return !p.Heartbeat }

// Which state a transition kind aims at is a role in the system's spec, not
// a state name: the observer's command facts say what a write does.
type stateRole int

const (
	anyState stateRole = iota
	scheduledState
	dispatchedState
	runningState
	cancelledState
)

// transitionOf is the job transition a Redis point commits, per the
// observer's facts.
func transitionOf(p *sim.Point) (sut.CommandFact, bool) {
	return p.Fact, p.Kind == sim.PointRedis && p.Fact.Transition
}

// isTransition matches a replica's transition from `from` (anyState: any) to
// `to`, the roles read from the spec the point's world runs.
func isTransition(p *sim.Point, from, to stateRole) bool {
	t, ok := transitionOf(p)
	return ok && isReplica(p.Group) && t.To == roleState(p, to) && (from == anyState || t.From == roleState(p, from))
}

func roleState(p *sim.Point, r stateRole) string {
	if p.Spec == nil {
		return ""
	}
	switch r {
	case scheduledState:
		return p.Spec.Scheduled
	case dispatchedState:
		return p.Spec.Dispatched
	case runningState:
		return p.Spec.Running
	case cancelledState:
		return p.Spec.Cancelled
	}
	return ""
}

// Target is a stable description of a fault point, the part of a plan entry's
// identity that says where: for Redis the command and first key (the engine's
// transition script adds from->to, other scripts their short sha), for publish,
// deliver and ack the subject and job id, for a worker the job id.
func Target(p *sim.Point) string {
	switch p.Kind {
	case sim.PointRedis:
		// Concatenated rather than formatted: every fault point asks.
		if t, ok := transitionOf(p); ok {
			return p.Cmd + " " + p.Key + " " + t.From + "->" + t.To
		}
		if (p.Cmd == "evalsha" || p.Cmd == "eval") && len(p.Args) > 1 {
			sha, ok := p.Args[1].(string)
			if !ok {
				sha = fmt.Sprint(p.Args[1])
			}
			if p.Cmd == "eval" {
				sum := sha1.Sum([]byte(sha))
				sha = hex.EncodeToString(sum[:])
			}
			if len(sha) > 8 {
				sha = sha[:8]
			}
			return strings.TrimSpace(p.Cmd + ":" + sha + " " + p.Key)
		}
		return strings.TrimSpace(p.Cmd + " " + p.Key)
	case sim.PointWorker, sim.PointClient:
		return p.JobID
	default:
		return strings.TrimSpace(p.Subject + " " + p.JobID)
	}
}
