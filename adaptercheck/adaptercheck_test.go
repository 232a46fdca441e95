package adaptercheck

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/scenarios"
	"github.com/dispatchsim/dispatchsim/sim"
	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/cordum"
	"github.com/dispatchsim/dispatchsim/systems/outbox"
)

// The bundled adapters are right: no error, and the report says so in words.
func TestBundledAdaptersPass(t *testing.T) {
	for _, sys := range []sut.System{cordum.System{}, outbox.System{}} {
		rep := Check(sys)
		require.False(t, rep.Failed(), rep.String())
		require.Len(t, rep.Worlds, 2*len(worlds))
	}
}

// Each mistake an adapter can make is named, with its fix.
func TestAdapterMistakesAreNamed(t *testing.T) {
	cases := []struct {
		name  string
		sys   sut.System
		finds string
	}{
		{"no result pointer", broken{mistake: dropResultPtr}, "without a result pointer"},
		{"scripts unnamed", broken{mistake: noScripts}, "not named by Observer.Scripts"},
		{"spec misses a state", broken{mistake: specWithoutState}, `which the spec does not list`},
		{"spec forbids a move the store made", broken{mistake: specWithoutEdge}, "Transitions do not allow"},
		{"lock never named", broken{mistake: noLockFacts}, "never named a lock command"},
		{"cancel writer", broken{mistake: cancelsByGateway}, "Spec.Cancels says the gateway writes cancels, but all"},
		{"grace longer than the wait", broken{mistake: graceTooLong}, "Spec.PickGrace is 5m0s"},
		{"fail-fast declared, a grace kept", broken{mistake: failFastDeclared}, "Spec.NoRouteFailsAtOnce, but jobs without a route waited"},
		{"the cap's code read as the cause", broken{mistake: capAsCause}, "record that same code as their cause"},
		{"a state called terminal that is not", broken{mistake: retryingTerminal}, "take it out of Spec.Terminal"},
		{"an at-least-once promise without a consumer", broken{mistake: atLeastOnceWithoutConsumer}, "the worker protocol has none"},
		{"no submit window declared", broken{mistake: noSubmitWindow}, "declare Spec.SubmitDedupWindow"},
		{"pulling declared, pushed run", broken{mistake: pullDeclared}, "the worker protocol is no sut.Puller"},
		{"a dispatch id without its generation", broken{mistake: idWithoutGen}, "dispatches of different generations of one job carried one id"},
	}
	warningsOnly := map[string]bool{"scripts unnamed": true, "no submit window declared": true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := Check(c.sys)
			require.True(t, rep.Failed() || warningsOnly[c.name], rep.String())
			require.True(t, strings.Contains(rep.String(), c.finds), rep.String())
		})
	}
}

type mistake int

const (
	dropResultPtr mistake = iota
	noScripts
	specWithoutState
	specWithoutEdge
	noLockFacts
	cancelsByGateway
	graceTooLong
	failFastDeclared
	capAsCause
	retryingTerminal
	atLeastOnceWithoutConsumer
	noSubmitWindow
	idWithoutGen
	pullDeclared
)

// broken is the engine's adapter with one mistake made on purpose.
type broken struct {
	cordum.System
	mistake mistake
}

func (b broken) Spec(o sut.Options) sut.Spec {
	s := b.System.Spec(o)
	switch b.mistake {
	case specWithoutState:
		var states []string
		for _, st := range s.States {
			if st != s.Retrying {
				states = append(states, st)
			}
		}
		s.States = states
	case specWithoutEdge:
		tr := map[string][]string{}
		for from, to := range s.Transitions {
			if from != s.Dispatched {
				tr[from] = to
			}
		}
		s.Transitions = tr
	case cancelsByGateway:
		s.Cancels = sut.CancelByGateway
	case graceTooLong:
		s.PickGrace = 5 * time.Minute
	case failFastDeclared:
		s.NoRouteFailsAtOnce = true
	case retryingTerminal:
		s.Terminal = append(append([]string{}, s.Terminal...), s.Retrying)
	case atLeastOnceWithoutConsumer:
		s.Delivery = sut.AtLeastOnceIdempotentConsumer
	case noSubmitWindow:
		s.SubmitDedupWindow = 0
	case pullDeclared:
		s.WorkersPull = true
	}
	return s
}

func (b broken) Worker() sut.WorkerProtocol {
	switch b.mistake {
	case atLeastOnceWithoutConsumer:
		return plainProtocol{b.System.Worker()}
	case idWithoutGen:
		return jobIDProtocol{plainProtocol{b.System.Worker()}}
	}
	return b.System.Worker()
}

// jobIDProtocol names a dispatch by its job alone: every generation of a
// job carries one id.
type jobIDProtocol struct{ plainProtocol }

func (p jobIDProtocol) DecodeDispatch(data []byte) (sut.Dispatch, error) {
	d, err := p.plainProtocol.DecodeDispatch(data)
	d.ID = "d-" + d.JobID
	return d, err
}

func (b broken) Observer() sut.Observer { return brokenObserver{b.System.Observer(), b.mistake} }

type brokenObserver struct {
	sut.Observer
	mistake mistake
}

func (o brokenObserver) Job(v sut.View, key string) sut.JobFact {
	f := o.Observer.Job(v, key)
	if o.mistake == dropResultPtr {
		f.ResultPtr = ""
	}
	if o.mistake == capAsCause && f.Cause != "" {
		f.Cause = string(engine.ReasonMaxSchedulingRetries)
	}
	return f
}

// DLQ, with capAsCause, files every job that used its retries up under
// the cap's own code, as a system that names no root cause does.
func (o brokenObserver) DLQ(v sut.View) map[string]sut.DLQEntry {
	out := o.Observer.DLQ(v)
	if o.mistake == capAsCause {
		for id, e := range out {
			if e.RetriesExhausted {
				e.ReasonCode = string(engine.ReasonMaxSchedulingRetries)
				out[id] = e
			}
		}
	}
	return out
}

func (o brokenObserver) Scripts() map[string]string {
	if o.mistake == noScripts {
		return nil
	}
	return o.Observer.Scripts()
}

func (o brokenObserver) Command(c sut.StoreCommand) sut.CommandFact {
	f := o.Observer.Command(c)
	if o.mistake == noLockFacts {
		f.LockKey = ""
	}
	return f
}

// Spec.WorkerGate must say what the worker protocol has: fault kinds aim at
// a gate's store commands only when it is declared.
func TestWorkerGateDeclarationMatchesTheProtocol(t *testing.T) {
	undeclared := cordum.System{}.Spec(sut.Options{})
	undeclared.WorkerGate = sut.GateNone
	a := newAudit(undeclared)
	a.workerGate(cordum.System{})
	require.Len(t, a.out, 1)
	require.Equal(t, Warning, a.out[0].Severity)
	require.Contains(t, a.out[0].What, "Spec.WorkerGate says none")

	a = newAudit(cordum.System{}.Spec(sut.Options{}))
	a.workerGate(cordum.System{})
	require.Empty(t, a.out, "the engine declares its fence")

	a = newAudit(cordum.System{}.Spec(sut.Options{}))
	a.workerGate(gateless{cordum.System{}})
	require.Len(t, a.out, 1)
	require.Equal(t, Error, a.out[0].Severity)
}

// gateless is the engine's adapter whose workers have no dispatch gate.
type gateless struct{ cordum.System }

func (gateless) Worker() sut.WorkerProtocol { return plainProtocol{cordum.System{}.Worker()} }

type plainProtocol struct{ sut.WorkerProtocol }

// A job run exactly twice, at generations 0 and 1 under one dispatch id, is
// named: the smallest history that shows the mistake.
func TestADispatchIDOfTwoGenerationsIsNamed(t *testing.T) {
	a := newAudit(cordum.System{}.Spec(sut.Options{}))
	h := &history.History{Executions: []history.Execution{{JobID: "j-1", Gen: 0, DispatchID: "d-j-1"},
		{JobID: "j-1", Gen: 1, DispatchID: "d-j-1"}, {JobID: "j-2", Gen: 0, DispatchID: "a"}, {JobID: "j-2", Gen: 1, DispatchID: "b"}}}
	a.run(&scenarios.Outcome{Scenario: "s", Seed: 1, Run: &sim.Result{History: h}})
	var what []string
	for _, f := range a.findings() {
		if strings.Contains(f.What, "dispatch id") {
			what = append(what, f.What)
		}
	}
	require.Len(t, what, 1, "%v", what)
	require.Contains(t, what[0], "carried one id")
	require.Contains(t, what[0], "job j-1")
	require.NotContains(t, what[0], "j-2")
}
