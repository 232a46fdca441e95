// Package store is the simulated Redis: one miniredis shared by every process
// of a world, and a go-redis client per process whose hook is the yield point
// and the fault point of every command. The hook records what each command
// committed (job states and versions, lock holders, command counts) as the
// ground truth the checkers compare the system's claims with, and the store
// serves the observers' sut.View straight from miniredis.
//
// It sees a system only through sut.Observer and imports nothing of the
// simulator but the kernel. No command runs on wall time or retries on its own
// (DESIGN §3); a fault is injected in the hook, never in the dialer.
package store
