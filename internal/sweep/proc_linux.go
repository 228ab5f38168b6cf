package sweep

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that a Ctrl-C at the terminal reaches
// the sweep alone; cancelling cmd's context interrupts the whole group, as a Ctrl-C would,
// and waits for it to exit. Should the sweep die, the kernel sends the run SIGTERM, which it
// handles as an interrupt: no run outlives its sweep.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
}
