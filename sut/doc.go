// Package sut is the boundary between the simulator and a system under test:
// what a Redis-and-bus job dispatcher supplies to be simulated, and the plain
// facts the simulator, the fault injector and the checkers see of it.
//
// A system is driven through its ports (Ports) and observed only from outside:
// store keys and commands, bus messages, metrics and client replies, turned
// into facts by its Observer. Its promises are data (Spec). Nothing here may
// import the simulator, a system, or anything beyond go-redis and prometheus
// types: both sides depend on sut, never on each other.
package sut
