package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
)

// TestExecKilledLeavesNoProcess kills agentsim exec with SIGKILL while its processes run:
// the parent-death signal ends every one of them.
func TestExecKilledLeavesNoProcess(t *testing.T) {
	h := buildHarness(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd, out := startAgentsim(t, "exec", "--agents", "3", "--out", dir, "--", h, "-hang-after", "1")
	path := filepath.Join(dir, "events.jsonl")
	var pids []int
	require.Eventually(t, func() bool {
		evs, _ := events.ReadFile[events.Event](path)
		pids = pids[:0]
		for _, e := range evs {
			if e.Kind == events.AgentStart && e.PID > 0 {
				pids = append(pids, e.PID)
			}
		}
		return len(pids) == 3
	}, 60*time.Second, 50*time.Millisecond, "the processes start: %s", out)
	for _, pid := range pids {
		assert.True(t, running(pid), "process %d runs before the kill", pid)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return !running(pid) }, 10*time.Second, 20*time.Millisecond, "process %d ends with agentsim", pid)
	}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S …".
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}
