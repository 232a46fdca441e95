// Package model holds the porcupine models the linearizability checks run
// against: the job lifecycle as clients and the store see it (one partition per
// job id) and run admission as a set-once register (one partition per
// idempotency key).
//
// Models are pure sequential specifications. This package must never do I/O,
// read a clock, draw randomness or start a goroutine, and must never import
// engine, sim or a system: the transition graph a job lifecycle follows is the
// system's spec's, passed in, so the models hold for any system.
//
// An operation whose outcome is unknown (a lost reply, a failed call that may
// have applied) gets Return = [Infinity], as etcd's robustness tests do, so it
// may linearize at any point after its call.
package model

import (
	"math"

	"github.com/anishathalye/porcupine"
)

// Infinity is the return time of an operation whose outcome is unknown.
// porcupine compresses timestamps before visualizing, so the largest int64 is
// safe.
const Infinity int64 = math.MaxInt64

// partitionBy groups ops by the key of their input, in order of first
// appearance so the partitions (and their visualization) are deterministic.
func partitionBy(history []porcupine.Operation, key func(input any) string) [][]porcupine.Operation {
	index := map[string]int{}
	var parts [][]porcupine.Operation
	for _, op := range history {
		k := key(op.Input)
		i, ok := index[k]
		if !ok {
			i = len(parts)
			index[k] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], op)
	}
	return parts
}

// partitionEventsBy is partitionBy for events; a return event carries only an
// output, so it follows its call by id.
func partitionEventsBy(history []porcupine.Event, key func(input any) string) [][]porcupine.Event {
	index := map[string]int{}
	partOf := map[int]int{} // event id -> partition
	var parts [][]porcupine.Event
	for _, ev := range history {
		i, seen := partOf[ev.Id]
		if !seen {
			if ev.Kind != porcupine.CallEvent {
				panic("model: return event before its call")
			}
			k := key(ev.Value)
			var ok bool
			if i, ok = index[k]; !ok {
				i = len(parts)
				index[k] = i
				parts = append(parts, nil)
			}
			partOf[ev.Id] = i
		}
		parts[i] = append(parts[i], ev)
	}
	return parts
}
