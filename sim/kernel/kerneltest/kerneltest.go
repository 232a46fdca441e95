// Package kerneltest gives the simulator's packages what their own tests need
// of a world: a kernel, a host whose injector a test sets, and an empty
// history, so the store, the bus, the workers and the clients are each tested
// without assembling a sim.World. It is for tests only.
package kerneltest

import (
	"testing"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// Host is a kernel.Host for tests: it asks Injector (nil: no faults),
// records what fired in History, and crashes an actor alone, since a test's
// groups are not processes that restart.
type Host struct {
	Injector kernel.Injector
	History  *history.History
}

// FaultsArmed reports whether an injector is set.
func (h *Host) FaultsArmed() bool { return h.Injector != nil }

// Fault asks the injector, if any.
func (h *Host) Fault(p *kernel.Point) (kernel.Fault, bool) {
	if h.Injector == nil {
		return kernel.Fault{}, false
	}
	return h.Injector.At(p)
}

// RecordFault appends the fault to the history.
func (h *Host) RecordFault(_ *kernel.Actor, p *kernel.Point, f kernel.Fault, target string) {
	h.History.Faults = append(h.History.Faults, history.FaultRecord{Kind: f.Kind, Effect: f.Effect, Point: p.Kind,
		Target: target})
}

// Crash kills the actor.
func (h *Host) Crash(a *kernel.Actor) { a.Kill() }

// NewEnv returns an Env on a new kernel whose PRNGs derive from seed, with a
// test Host and the system's observer; keep keeps the trace text. The kernel
// shuts down when the test ends.
func NewEnv(t testing.TB, seed uint64, keep bool, obs sut.Observer) (kernel.Env, *Host, *kernel.Trace) {
	seeds := kernel.SeedTree{Root: seed}
	trace := kernel.NewTrace(keep)
	k := kernel.New(seeds.Child("scheduler"), trace)
	h := &Host{History: &history.History{}}
	t.Cleanup(k.Shutdown)
	return kernel.Env{Kernel: k, Host: h, History: h.History, Observer: obs, Seeds: seeds}, h, trace
}
