package cli

import (
	"fmt"
	"os"
	"os/exec"
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
	pids := waitForProcesses(t, filepath.Join(dir, "events.jsonl"), 3, out)
	for _, pid := range pids {
		assert.True(t, running(pid), "process %d runs before the kill", pid)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return !running(pid) }, 10*time.Second, 20*time.Millisecond, "process %d ends with agentsim", pid)
	}
}

// TestExecInterrupted stops the processes on Ctrl-C and exits 130, with their ends recorded.
func TestExecInterrupted(t *testing.T) {
	h := buildHarness(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd, out := startAgentsim(t, "exec", "--agents", "2", "--out", dir, "--", h, "-hang-after", "1")
	pids := waitForProcesses(t, filepath.Join(dir, "events.jsonl"), 2, out)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 130, exit.ExitCode(), out.String())
	for _, pid := range pids {
		assert.False(t, running(pid), "process %d stopped", pid)
	}
	evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	stopped := 0
	for _, e := range evs {
		if e.Kind == events.AgentDone && e.Reason == events.EndInterrupted {
			stopped++
		}
	}
	assert.Equal(t, 2, stopped, "both processes' ends are recorded as stopped at the interrupt")
}

// waitForProcesses waits until the run's events show n processes started and returns their pids.
func waitForProcesses(t *testing.T, path string, n int, out fmt.Stringer) []int {
	t.Helper()
	var pids []int
	require.Eventually(t, func() bool {
		evs, _ := events.ReadFile[events.Event](path)
		pids = pids[:0]
		for _, e := range evs {
			if e.Kind == events.AgentStart && e.PID > 0 {
				pids = append(pids, e.PID)
			}
		}
		return len(pids) == n
	}, 60*time.Second, 50*time.Millisecond, "the processes start: %s", out)
	return pids
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
