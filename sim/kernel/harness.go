package kernel

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// HarnessFault is a run stopped by the simulator itself: a panic raised in
// the harness's own code (the kernel, the store, the bus, the workers, the
// world, a fault's alarm), or a simulator invariant declared broken with
// Breach. It is never the system's finding: the seed fails as the harness's,
// and the run's evidence up to the fault is kept.
type HarnessFault struct {
	Where string        // the actor that was running, or "controller"
	Value string        // the panic value
	Stack string        // the panicking goroutine's stack
	Step  uint64        // the kernel's step at the fault
	Time  time.Duration // virtual time at the fault
	Tail  string        // the trace's last lines, when the run keeps its trace
}

func (f *HarnessFault) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "harness fault in %s at step %d (t=%s): %s", f.Where, f.Step, f.Time, f.Value)
	if f.Stack != "" {
		b.WriteString("\nstack:\n" + strings.TrimRight(f.Stack, "\n"))
	}
	if f.Tail != "" {
		b.WriteString("\ntrace tail:\n" + f.Tail)
	}
	return b.String()
}

// HarnessFault marks the error as the harness's for packages that may not
// import the kernel (the checker), and says where it happened.
func (f *HarnessFault) HarnessFault() (step uint64, at time.Duration) { return f.Step, f.Time }

// Breach is the panic value of a simulator invariant found broken: the
// harness's own defect, whoever's code was on the stack.
type Breach string

// Breachf stops the run as a harness fault: a simulator invariant is broken.
func Breachf(format string, args ...any) { panic(Breach(fmt.Sprintf(format, args...))) }

// SystemFailure is the panic value the harness raises for a failure of the
// system under test that stops the run (a replica that cannot start): the
// system's, though the harness's code raised it.
type SystemFailure string

// SystemPanic is a panic raised outside the harness's code (the system under
// test, or a library it called, crashed a process), or a SystemFailure. It
// fails the run at the assumptions layer, as the system's.
type SystemPanic struct {
	Where string
	Value string
	Stack string
}

func (p *SystemPanic) Error() string {
	return fmt.Sprintf("sim: %s panicked: %s\n%s", p.Where, p.Value, p.Stack)
}

// Recovered turns a panic recovered at where (an actor's name, or
// "controller") into the run's error (Classify), with the step, the time
// and the trace's tail of the kernel's run. It must be called from the
// deferred function that recovered the panic.
func (k *Kernel) Recovered(where string, rec any) error {
	err := Classify(where, rec)
	if f, ok := err.(*HarnessFault); ok {
		f.Step, f.Time = k.step, k.now
		if b := k.trace.Bytes(); len(b) > 0 {
			f.Tail = Tail(b, 20)
		}
	}
	return err
}

// Classify says whose a recovered panic is, and must be called from the
// deferred function that recovered it: the stack it reads is the panicking
// one. A Breach, or a panic raised in the harness's own packages, is a
// HarnessFault; a SystemFailure or any other panic is a SystemPanic.
func Classify(where string, rec any) error {
	stack := panicStack(debug.Stack())
	value := fmt.Sprint(rec)
	_, breach := rec.(Breach)
	_, system := rec.(SystemFailure)
	if system || !breach && !raisedByHarness() {
		return &SystemPanic{Where: where, Value: value, Stack: stack}
	}
	return &HarnessFault{Where: where, Value: value, Stack: stack}
}

// panicStack is a goroutine's stack from its panic down, without what
// changes from run to run (the goroutine's number, argument values), so a
// seed's finding reads the same each time it runs.
func panicStack(stack []byte) string {
	lines := strings.Split(strings.TrimRight(string(stack), "\n"), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			lines = lines[i:]
			break
		}
	}
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "\t"): // file:line +offset
		case strings.HasPrefix(l, "created by "):
			if at := strings.LastIndex(l, " in goroutine "); at >= 0 {
				lines[i] = l[:at]
			}
		default:
			if at := strings.LastIndex(l, "("); at > 0 && strings.HasSuffix(l, ")") {
				lines[i] = l[:at] + "(...)"
			}
		}
	}
	return strings.Join(lines, "\n")
}

// module is this module's import path ("github.com/dispatchsim/dispatchsim"),
// read from a function of this package so a fork's path works as well.
var module = func() string {
	pc, _, _, _ := runtime.Caller(0)
	return strings.TrimSuffix(pkgOf(runtime.FuncForPC(pc).Name()), "/sim/kernel")
}()

// harnessPackages are the module's top folders holding the harness: a panic
// raised there is the simulator's. engine/, systems/ and examples/ hold
// systems under test, and sut/ is what a system supplies.
var harnessPackages = map[string]bool{"sim": true, "faults": true, "scenarios": true, "checker": true,
	"history": true, "model": true, "reports": true, "simrun": true, "third_party": true, "internal": true,
	"adaptercheck": true}

// raisedByHarness reports whether the panic being recovered was raised in
// the harness (raisedIn over the goroutine's stack).
func raisedByHarness() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var functions []string
	for {
		fr, more := frames.Next()
		functions = append(functions, fr.Function)
		if !more {
			return raisedIn(functions)
		}
	}
}

// raisedIn reports whether a panic was raised in the harness, from the
// stack's functions, innermost first: below the panic, the first frame
// outside the runtime and the standard library decides (a nil dereference
// in the engine is the engine's; a panic in a library is its caller's only
// when that caller is the standard library). The ports' baton assertion
// (Kernel.Current) is its caller's: the system's when any frame above it
// is neither the harness's nor the ports' own libraries.
func raisedIn(stack []string) bool {
	panicking := false
	for i, fn := range stack {
		switch {
		case fn == "runtime.gopanic":
			panicking = true
		case panicking && fn == module+"/sim/kernel.(*Kernel).Current":
			return !calledBySystem(stack[i+1:])
		case panicking && !standard(pkgOf(fn)):
			return isHarnessPackage(pkgOf(fn))
		}
	}
	return false
}

// portLibraries are the libraries a system's ports are made of: a frame of
// theirs is neither the system's nor the harness's.
var portLibraries = []string{"github.com/redis/go-redis/"}

// calledBySystem reports whether a frame of stack is the system's: outside
// the standard library, the harness and the ports' libraries.
func calledBySystem(stack []string) bool {
	for _, fn := range stack {
		pkg := pkgOf(fn)
		if standard(pkg) || isHarnessPackage(pkg) || slices.ContainsFunc(portLibraries, func(lib string) bool {
			return strings.HasPrefix(pkg, lib)
		}) {
			continue
		}
		return true
	}
	return false
}

// isHarnessPackage reports whether pkg is one of the harness's packages.
func isHarnessPackage(pkg string) bool {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return false
	}
	top, _, _ := strings.Cut(rel, "/")
	return harnessPackages[top]
}

// standard reports whether pkg is the runtime or the standard library: no
// dot in its first path element.
func standard(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// pkgOf is the import path of a function's full name
// ("example.com/m/sim/store.(*Store).read" -> "example.com/m/sim/store").
func pkgOf(function string) string {
	slash := strings.LastIndex(function, "/")
	dot := strings.Index(function[slash+1:], ".")
	if dot < 0 {
		return function
	}
	return function[:slash+1+dot]
}
