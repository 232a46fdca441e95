// Package layering holds the test that keeps DESIGN §1's dependency rules
// true: the simulator's core never imports a system, checkers and reports
// read facts and never the simulator or the engine, the engine never imports
// the harness. It has no code of its own and must never grow any.
package layering
