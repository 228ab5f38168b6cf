//go:build !unix

package procs

import (
	"os"
	"syscall"
)

// sysProcAttr is the default: no process groups here.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate and kill end the process itself (there are no process groups to signal).
func terminate(p *os.Process) { _ = p.Kill() }

// kill ends the process.
func kill(p *os.Process) { _ = p.Kill() }

// signalOf is "" here: an exit status is all there is.
func signalOf(*os.ProcessState) string { return "" }
