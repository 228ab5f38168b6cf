package procs

import "syscall"

// sysProcAttr puts the process in a group of its own and kills it when the thread that
// started it ends (Supervisor.agent keeps that thread until the process exits).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
