package sut

import "time"

// Options are the settings a world runs a system with, as data so a run can
// print and compare them. Zero values mean the system's defaults.
type Options struct {
	DispatchTimeout      time.Duration `json:",omitempty"`
	RunningTimeout       time.Duration `json:",omitempty"`
	ReconcileInterval    time.Duration `json:",omitempty"`
	MaxSchedulingRetries int           `json:",omitempty"`
	// RunLimit is an org's max concurrent workflow runs.
	RunLimit int     `json:",omitempty"`
	Routing  Routing `json:",omitempty"`
}

// Routing maps topics to pools and pools to the capabilities they need.
type Routing struct {
	Topics map[string][]string `json:",omitempty"`
	// Pools maps a pool to the capabilities a job needs to be sent there.
	Pools map[string][]string `json:",omitempty"`
}

// Clone copies r so a change to the copy leaves r alone.
func (r Routing) Clone() Routing {
	out := Routing{Topics: map[string][]string{}, Pools: map[string][]string{}}
	for t, p := range r.Topics {
		out.Topics[t] = append([]string(nil), p...)
	}
	for p, req := range r.Pools {
		out.Pools[p] = append([]string(nil), req...)
	}
	return out
}
