//go:build unix && !linux

package procs

import "syscall"

// sysProcAttr puts the process in a group of its own; there is no parent-death signal here.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
