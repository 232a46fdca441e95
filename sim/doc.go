// Package sim is the deterministic kernel: a seed tree, a virtual clock, an
// actor scheduler that lets exactly one actor run at a time, a simulated Redis
// (miniredis behind a go-redis hook that is both yield point and fault
// point), a simulated JetStream-like bus, the gateway clients and workers, and
// the trace and checksum of every decision.
//
// It hosts any system that implements sut.System and sees it only through
// sut: it never imports engine or a system package (internal/layering holds
// it to that). It never reads the wall clock outside the stall watchdog,
// never draws global randomness, and never lets the Go scheduler decide the
// order of actors (DESIGN §3; internal/determinism checks the source).
package sim
