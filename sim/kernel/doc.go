// Package kernel is the simulator's deterministic core: the seed tree, the
// actor scheduler that lets exactly one actor run at a time, the virtual
// clocks, the trace with its running checksum, the first-difference check
// over two traces, the types of the fault hook (Point, Fault, Injector,
// Host), and whose a panic in a run is (harness.go): a fault of the
// harness, which never fails the system, or the system's.
//
// Everything above it (the simulated store and bus, the workers, the clients,
// the world) runs as its actors. It imports no system under test and nothing
// of the simulator above it. It never lets the Go scheduler decide the order
// of actors, never reads the wall clock outside the stall watchdog, and never
// draws global randomness (DESIGN §3; internal/determinism checks the
// source). kernel.go is the only file of the simulator that starts goroutines.
package kernel
