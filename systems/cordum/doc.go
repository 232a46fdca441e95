// Package cordum adapts engine/, the dispatch engine under test, to the
// simulator's boundary (sut): it wraps the simulator's ports into the
// engine's port types, maps handler errors to bus settle values, and reads
// the engine's store layout and wire format into plain facts.
//
// It is the only non-test importer of engine besides mutants. It must never
// import the simulator: the simulator sees the engine only through sut.
package cordum
