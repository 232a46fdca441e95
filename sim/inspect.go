package sim

import (
	"strconv"
	"time"

	"github.com/dispatchsim/dispatchsim/sim/bus"
)

// WorldState is what a world holds at one step: the engineer's view when a
// replay stops at --until-step.
type WorldState struct {
	Step     uint64
	Time     time.Duration
	Jobs     []JobView
	Locks    []LockView
	InFlight []InFlight
	Groups   []GroupView
}

// JobView is one job's stored hash, the fields that matter.
type JobView struct {
	ID, State, Version, Attempts, DispatchGen, DispatchID string
}

// LockView is one held lock and its remaining TTL.
type LockView struct {
	Key, Token string
	TTL        time.Duration
}

// InFlight is a delivery a handler holds and has not acked yet.
type InFlight = bus.InFlight

// GroupView is a process: crashed, paused until, or up.
type GroupView struct {
	Name        string
	Crashed     bool
	PausedUntil time.Duration
}

// RunToStep plays the world (fault phase, then heal phase) until the kernel
// reaches step, and returns what the world held there. The world is spent.
func (w *World) RunToStep(step uint64) (WorldState, error) {
	w.start()
	halt := func() bool { return w.k.Step() >= step }
	err := w.k.Run(w.cfg.FaultPhase, halt)
	if err == nil && !halt() {
		err = w.heal(halt)
	}
	st := w.inspect()
	w.abort()
	return st, err
}

// inspect reads the world's state straight from the store and the kernel.
func (w *World) inspect() WorldState {
	k := w.k
	st := WorldState{Step: k.Step(), Time: k.Now()}
	for _, key := range w.store.Keys() {
		if id, ok := w.obs.JobKey(key); ok {
			j := w.obs.Job(w.store, key)
			st.Jobs = append(st.Jobs, JobView{ID: id, State: j.State, Version: strconv.FormatInt(j.Version, 10),
				Attempts: strconv.Itoa(j.Attempts), DispatchGen: strconv.Itoa(j.Gen), DispatchID: j.DispatchID})
		}
	}
	for _, l := range w.obs.Locks(w.store) {
		st.Locks = append(st.Locks, LockView{Key: l.Key, Token: l.Token, TTL: l.TTL})
	}
	st.InFlight = w.bus.Unsettled()
	for _, g := range k.Groups() {
		v := GroupView{Name: g.Name, Crashed: g.Crashed()}
		if g.PausedUntil() > k.Now() {
			v.PausedUntil = g.PausedUntil()
		}
		st.Groups = append(st.Groups, v)
	}
	return st
}
