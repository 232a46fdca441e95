// Package faults is the fault catalog of the simulator: one file per kind of
// fault a real deployment can produce (DESIGN.md §4), the knobs that turn each
// kind on and say how often it fires, swarm options that draw a different fault
// mix per seed, a budget that keeps every plan survivable, and the fault plan of
// a run, which replays exactly and shrinks.
//
// An Injector implements sim.Injector and sim.WorldSetup. It decides on the
// simulator's single active goroutine and must stay deterministic: it never reads
// the wall clock, never draws global randomness (every kind draws from its own
// PCG stream derived from the seed it is given), never starts a goroutine, and
// never lets map iteration order influence a decision.
//
// faults reaches the engine only through what the simulator shows of it at a
// fault point (Redis commands and their arguments, bus subjects, job ids): it
// does not import engine/.
package faults
