// Package layering holds the test that keeps DESIGN §1's dependency rules
// true: the simulator never imports a system, and each of its packages only
// those below it (kernel; store and bus; workers and traffic; the world);
// checkers and reports read facts and never the simulator or the engine; the
// engine never imports the harness. It has no code of its own and must never
// grow any.
package layering
