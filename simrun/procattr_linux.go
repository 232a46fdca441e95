package simrun

import "syscall"

// workerProcAttr makes a worker process die with its parent, so a parent
// killed outright (SIGKILL, a second Ctrl-C) leaves no worker writing.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
