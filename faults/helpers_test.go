package faults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
)

// shortConfig is a small, fast world: ten jobs, a three-minute fault phase.
func shortConfig(seed uint64, inj *Injector) sim.Config {
	return sim.Config{System: cordum.System{}, Seed: seed, Injector: inj, ReplicaSkew: inj.ReplicaSkew(3),
		Workload:   sim.Workload{Jobs: 10},
		FaultPhase: 3 * time.Minute, Drain: time.Minute}
}

func run(t *testing.T, cfg sim.Config) *sim.Result {
	t.Helper()
	res := sim.NewWorld(cfg).Run()
	require.NoError(t, res.Err, "seed %d", cfg.Seed)
	return res
}

// requireAllTerminal asserts the plan was survivable: every job ended.
func requireAllTerminal(t *testing.T, res *sim.Result) {
	t.Helper()
	for id, h := range res.Final {
		require.True(t, engine.JobState(h.State).Terminal(), "job %s ended %s", id, h.State)
	}
}

// watched wraps an injector and keeps every point at which a fault fired.
type watched struct {
	*Injector
	fired []firedAt
}

type firedAt struct {
	p sim.Point
	f sim.Fault
}

func (w *watched) At(p *sim.Point) (sim.Fault, bool) {
	f, ok := w.Injector.At(p)
	if ok {
		w.fired = append(w.fired, firedAt{p: *p, f: f})
	}
	return f, ok
}

// Points shaped as the simulator asks them.

func redisPoint(group, cmd string, write bool, args ...any) *sim.Point {
	all := append([]any{cmd}, args...)
	p := &sim.Point{Kind: sim.PointRedis, Group: group, Actor: group + "/x", Cmd: cmd, Args: all, Write: write}
	first := 1 // the first key, as the simulator finds it
	if cmd == "evalsha" || cmd == "eval" {
		first = 3
	}
	if len(all) > first {
		p.Key, _ = all[first].(string)
	}
	return withFacts(p)
}

// onTimer makes p a point of a timer's actor (a lock renewal in the background).
func onTimer(p *sim.Point) *sim.Point {
	p.Actor = p.Group + "/timer#3"
	return p
}

// cordumSpec is the spec the fault points are matched against.
var cordumSpec = cordum.System{}.Spec(sut.Options{})

// testScripts names the placeholder hashes the points below send, as the
// engine names its scripts.
var testScripts = map[string]string{
	"0123456789abcdef0123456789abcdef01234567": engine.ScriptTransition,
	"aaaa": engine.ScriptLockRenew, "cccc": engine.ScriptRunKeyReserve, "dddd": engine.ScriptRunKeyTakeOver,
	"eeee": engine.ScriptRunKeyRelease, "ffff": engine.ScriptRunCreate,
}

// withFacts adds what the observer and the spec say, as the simulator does.
func withFacts(p *sim.Point) *sim.Point {
	if p.Kind == sim.PointRedis {
		p.Fact = cordum.System{}.Observer().Command(sut.ParseStoreCommand(p.Args, testScripts))
	}
	p.Heartbeat = p.Subject == "sys.heartbeat"
	p.Spec = &cordumSpec
	return p
}

// transitionPoint is the engine's transition script as go-redis sends it.
func transitionPoint(group, from, to, token string) *sim.Point {
	args := []any{"evalsha", "0123456789abcdef0123456789abcdef01234567", 4,
		"job:j-1", "job:events:j-1", "cordum:scheduler:job:j-1", "dlq:entry:j-1",
		"j-1", from, int64(3), to, int64(1767225600000), token, "reason", ""}
	return withFacts(&sim.Point{Kind: sim.PointRedis, Group: group, Actor: group + "/x", Cmd: "evalsha", Key: "job:j-1",
		Args: args, Write: true})
}

func busPoint(kind sim.PointKind, group, subject, job string) *sim.Point {
	return withFacts(&sim.Point{Kind: kind, Group: group, Actor: group + "/x", Subject: subject, JobID: job, Delivery: 1})
}
