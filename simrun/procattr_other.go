//go:build !linux

package simrun

import "syscall"

// workerProcAttr: only Linux can tie a child's life to its parent's; elsewhere
// a worker ends when its stdin closes.
func workerProcAttr() *syscall.SysProcAttr { return nil }
