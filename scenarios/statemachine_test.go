package scenarios

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/dispatchsim/dispatchsim/checker"
	"github.com/dispatchsim/dispatchsim/faults"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/internal/longtest"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// armedInjector fires each armed kind once, at the next point it applies to:
// the state machine decides which faults happen, the kernel decides where.
type armedInjector struct {
	armed []faults.Kind
}

func (a *armedInjector) At(p *sim.Point) (sim.Fault, bool) {
	for i, k := range a.armed {
		if !k.Applies(p) {
			continue
		}
		a.armed = append(a.armed[:i], a.armed[i+1:]...)
		d := time.Duration(k.Defaults.DurationMsMax) * time.Millisecond
		return sim.Fault{Kind: k.Name, Effect: k.Effect, Duration: d}, true
	}
	return sim.Fault{}, false
}

// pointKinds names the catalog's kinds that fire at a point; window and setup
// kinds shape a whole run and have no "next point" to arm.
func pointKinds() []string {
	var out []string
	for _, k := range faults.Catalog() {
		if k.Timing == faults.AtPoint {
			out = append(out, k.Name)
		}
	}
	return out
}

// machine is one state-machine run: a world driven step by step.
type machine struct {
	w     *sim.World
	d     *sim.Driver
	inj   *armedInjector
	jobs  []string
	kinds []string
}

// replicaDown is how long a crashed replica stays down, an armed
// ReplicaCrash's and a crashReplica action's alike.
const replicaDown = 20 * time.Second

func newMachine(t *rapid.T) *machine {
	return newMachineSeeded(rapid.Uint64().Draw(t, "seed"))
}

func newMachineSeeded(seed uint64) *machine {
	inj := &armedInjector{}
	cfg := sim.Config{System: cordum.System{}, Seed: seed, Injector: inj, Replicas: 2, Workload: sim.Workload{Scripted: true, RunLimit: 1},
		ReplicaRestartAfter: replicaDown}
	// An ambiguous publish (PublishFailsAfterStored) duplicates a dispatch by
	// construction unless the broker de-duplicates: the deployment the engine
	// is specified for, as in every scenario but ambiguous-publish-no-dedup.
	cfg.Bus.Dedup = true
	m := &machine{w: sim.NewWorld(cfg), inj: inj, kinds: pointKinds()}
	m.d = m.w.Drive()
	return m
}

// crashReplica takes replica i (0-based) down now and starts it again after
// replicaDown, as operator events: unlike the driver's own crash, an event
// goes into the history, and the checkers excuse a section cut off by a crash
// only when the history holds the crash.
func (m *machine) crashReplica(i int) error {
	now := m.d.Now()
	if err := m.w.Schedule(sim.Event{At: now, Action: sim.EventKill, Replica: i + 1}); err != nil {
		return err
	}
	return m.w.Schedule(sim.Event{At: now + replicaDown, Action: sim.EventStart, Replica: i + 1})
}

// pauseReplica freezes replica i (0-based) for d from now, as an operator
// event, so the history holds the pause (see crashReplica).
func (m *machine) pauseReplica(i int, d time.Duration) error {
	return m.w.Schedule(sim.Event{At: m.d.Now(), Action: sim.EventPause, Replica: i + 1, For: d})
}

// actions are workload operations, process faults, armed point faults and the
// passing of time; "" is the invariant, checked after every action.
func (m *machine) actions() map[string]func(*rapid.T) {
	jobOf := func(t *rapid.T) string {
		if len(m.jobs) == 0 {
			t.Skip("no job yet")
		}
		return rapid.SampledFrom(m.jobs).Draw(t, "job")
	}
	return map[string]func(*rapid.T){
		"submit": func(t *rapid.T) {
			m.jobs = append(m.jobs, m.d.Submit(rapid.SampledFrom([]string{"default", "gpu"}).Draw(t, "topic")))
		},
		"read":     func(t *rapid.T) { m.d.ReadStatus(jobOf(t)) },
		"cancel":   func(t *rapid.T) { m.d.Cancel(jobOf(t)) },
		"startRun": func(t *rapid.T) { m.d.StartRun(fmt.Sprintf("key-%d", rapid.IntRange(1, 3).Draw(t, "key"))) },
		"crashReplica": func(t *rapid.T) {
			if err := m.crashReplica(rapid.IntRange(0, m.d.Replicas()-1).Draw(t, "replica")); err != nil {
				t.Fatalf("crash: %v", err)
			}
		},
		"pauseReplica": func(t *rapid.T) {
			i := rapid.IntRange(0, m.d.Replicas()-1).Draw(t, "replica")
			if err := m.pauseReplica(i, time.Duration(rapid.IntRange(1, 90).Draw(t, "pause_s"))*time.Second); err != nil {
				t.Fatalf("pause: %v", err)
			}
		},
		"crashWorker": func(t *rapid.T) { m.d.CrashWorker(rapid.IntRange(0, m.d.Workers()-1).Draw(t, "worker")) },
		"arm": func(t *rapid.T) {
			name := rapid.SampledFrom(m.kinds).Draw(t, "kind")
			k, _ := faults.Lookup(name)
			m.inj.armed = append(m.inj.armed, k)
		},
		"advance": func(t *rapid.T) {
			d := time.Duration(rapid.IntRange(100, 60_000).Draw(t, "advance_ms")) * time.Millisecond
			if err := m.d.Advance(d); err != nil {
				t.Fatalf("kernel: %v", err)
			}
		},
		"": func(t *rapid.T) {
			if vs := checker.CheckInvariants(checker.Input{History: m.d.History(), System: m.w.Spec()}); len(vs) > 0 {
				t.Fatalf("at %s: %s", m.d.Now(), vs[0])
			}
		},
	}
}

// stateMachine is the property: any sequence of operations, faults and waits
// keeps the invariants at every step, and once the world heals every check
// passes, liveness and linearizability included.
func stateMachine(t *rapid.T) {
	m := newMachine(t)
	finished := false
	defer func() {
		if !finished {
			m.d.Abort()
		}
	}()
	t.Repeat(m.actions())
	finished = true
	res := m.d.Finish()
	r := checker.Check(checker.Input{History: res.History, Final: res.Final, DLQ: res.DLQ, Admission: res.Admission,
		Metrics: m.w.Metrics(), RunErr: res.Err, System: m.w.Spec()})
	if r.Failed() {
		t.Fatalf("after the heal phase:\n%s", r.Summary())
	}
}

// longChecks is how many sequences the long run draws (rapid's default is
// 100, a fifth of it under -short): 3,000 took 65s of CPU on one core and
// 2m36s on a 2-core machine others were loading, within the long run's 3
// minutes for it.
const longChecks = 3000

// TestStateMachine runs the engine through random operation and fault
// sequences. A failure is shrunk to a minimal sequence and saved under
// testdata/rapid/TestStateMachine/, which every later run replays first.
func TestStateMachine(t *testing.T) {
	if longtest.Enabled() {
		drawChecks(t, longChecks)
	}
	rapid.Check(t, stateMachine)
}

// rapidChecksChosen reports whether the command line (-rapid.checks) or the
// environment (RAPID_CHECKS) chose rapid's check count; read before any
// test sets the flag itself.
var rapidChecksChosen = sync.OnceValue(func() bool {
	_, chosen := os.LookupEnv("RAPID_CHECKS")
	flag.Visit(func(f *flag.Flag) { chosen = chosen || f.Name == "rapid.checks" })
	return chosen
})

// drawChecks has rapid draw n sequences in t, unless the count was chosen
// where the run was started.
func drawChecks(t *testing.T, n int) {
	if rapidChecksChosen() {
		return
	}
	old := flag.Lookup("rapid.checks").Value.String()
	require.NoError(t, flag.Set("rapid.checks", strconv.Itoa(n)))
	t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
	t.Logf("long run: %d sequences", n)
}

// FuzzStateMachine is the same property for `go test -fuzz FuzzStateMachine`.
func FuzzStateMachine(f *testing.F) {
	seed := make([]byte, 512)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed)
	f.Fuzz(rapid.MakeFuzz(stateMachine))
}

// The state machine's crashes and pauses reach the history, where the
// checkers look for what cut a section off: a crash the history lacks makes
// a section that died mid-publish read as a lock left to lapse by a live one.
func TestStateMachineCrashesAndPausesAreInTheHistory(t *testing.T) {
	m := newMachineSeeded(7)
	t.Cleanup(m.d.Abort)
	require.NoError(t, m.d.Advance(5*time.Second))
	crashAt := m.d.Now()
	require.NoError(t, m.crashReplica(0))
	require.NoError(t, m.pauseReplica(1, 3*time.Second))
	require.NoError(t, m.d.Advance(30*time.Second))

	type event struct {
		actor, kind string
		effect      history.Effect
		at          time.Duration
	}
	var got []event
	for _, f := range m.d.History().Faults {
		if strings.HasPrefix(f.Actor, "replica-") {
			got = append(got, event{f.Actor, f.Kind, f.Effect, f.Time})
		}
	}
	require.Equal(t, []event{
		{"replica-1", "Event:kill", history.EffectCrash, crashAt},
		{"replica-2", "Event:pause", history.EffectPause, crashAt},
		{"replica-1", "Event:start", "", crashAt + replicaDown},
	}, got)
}
