//go:build !linux

package sweep

import (
	"os"
	"os/exec"
)

// ownGroup makes cancelling cmd's context interrupt it, as a Ctrl-C would, and wait for it to
// exit; where interrupts cannot be sent, the process is killed.
func ownGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}
