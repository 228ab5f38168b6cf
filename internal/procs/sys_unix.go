//go:build unix

package procs

import (
	"os"
	"syscall"
)

// terminate sends SIGTERM to p's process group.
func terminate(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill sends SIGKILL to p's process group.
func kill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// signalOf names the signal that ended the process, "" when it exited by itself.
func signalOf(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
