// Package sim assembles a simulated deployment: a World puts the system under
// test's replicas and gateway on the simulated store and bus, adds the
// workers and the clients, runs the fault phase and the heal phase, and
// returns the ground truth of what happened (the history, the final job
// facts, the DLQ and the admission state) with the trace's checksum.
//
// The parts live in packages that follow the pipeline, each importing only
// those before it:
//
//	sim/kernel   seed tree, actor scheduler, virtual clocks, trace and checksum, fault hook types
//	sim/store    the simulated Redis: miniredis behind a go-redis hook (yield and fault point)
//	sim/bus      the simulated JetStream-like broker
//	sim/workers  the simulated workers
//	sim/traffic  the workload: gateway clients, run clients, workflow engine
//	sim          the world that assembles them; a Driver for step-by-step runs
//
// sim/kernel/kerneltest stands in for the world in the packages' own tests.
//
// The world hands each part a kernel.Env (kernel, fault hook, history,
// observer, seed tree); the fault hook and crashes stay with the world, which
// knows which process an actor belongs to. Config and its parts are plain
// data, so the options a seed ran with can be printed and compared.
//
// It hosts any system that implements sut.System and sees it only through
// sut: no package of the simulator imports engine or a system package
// (internal/layering holds it to that). It never reads the wall clock outside
// the kernel's stall watchdog, never draws global randomness, and never lets
// the Go scheduler decide the order of actors (DESIGN §3;
// internal/determinism checks the source).
package sim
