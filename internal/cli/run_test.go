package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// execute runs agentsim in-process and returns its exit code, stdout and stderr.
func execute(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// finished are the exit codes of a command that ran to a verdict, whatever it is: a test that
// needs only a run directory accepts any of them, since on a loaded machine a run's lag can
// make its verdict unreliable (exit 4) however healthy the simulator was.
var finished = []int{ExitOK, ExitVerdict, ExitUnreliable}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// TestRunRejectsBadInput checks that each kind of bad input gives the exit code and message of
// docs/files.md §5 before any agent starts.
func TestRunRejectsBadInput(t *testing.T) {
	unreachable := freeAddr(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  []string
	}{
		// A workload file that is not YAML.
		{"not yaml", []string{"run", "--workload", writeFile(t, "bad.yaml", "agents: [1, 2\n")}, ExitUsage, []string{"bad.yaml"}},
		// A workload file that does not exist.
		{"missing file", []string{"run", "--workload", "/nonexistent/w.yaml"}, ExitUsage, []string{"/nonexistent/w.yaml"}},
		// An unknown key in the workload file.
		{"unknown key in file", []string{"run", "--workload", writeFile(t, "typo.yaml", "name: t\nagentz: 3\n")}, ExitUsage, []string{`"agentz"`}},
		// An unknown key given with --set.
		{"unknown --set key", []string{"run", "--workload", "smoke", "--set", "pacer.slotz=16"}, ExitUsage, []string{"pacer.slotz"}},
		// Negative counts, every problem reported at once.
		{"negative counts", []string{"run", "--workload", "smoke", "--agents", "-3", "--rounds", "-1"}, ExitUsage, []string{"agents: -3", "rounds: -1"}},
		// --speedup only applies to the embedded simulator.
		{"speedup with server", []string{"run", "--workload", "smoke", "--server", "http://127.0.0.1:1", "--speedup", "20"}, ExitUsage, []string{"--speedup applies only to the embedded simulator"}},
		// An unknown fault.
		{"unknown fault", []string{"run", "--workload", "smoke", "--sim-fault", "wedge"}, ExitUsage, []string{`"wedge"`, "long-context-wedge"}},
		// An unreachable server fails fast with a runtime error.
		{"unreachable server", []string{"run", "--workload", "smoke", "--server", "http://" + unreachable, "--out", t.TempDir()}, ExitRuntime, []string{"unreachable", unreachable}},
		// A bad flag value.
		{"bad flag", []string{"run", "--agents", "many"}, ExitUsage, []string{"--agents"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := execute(t, tc.args...)
			assert.Equal(t, tc.code, code, "exit code; stderr: %s", stderr)
			for _, m := range tc.msg {
				assert.Contains(t, stderr, m)
			}
			assert.Less(t, time.Since(start), 10*time.Second, "bad input must fail fast")
		})
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// startAgentsim runs the test binary as agentsim in its own process.
func startAgentsim(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "AGENTSIM_TEST_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// waitForEvents waits until the run's events.jsonl has at least n request_sent events.
func waitForEvents(t *testing.T, path string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		evs, err := events.ReadFile[events.Event](path)
		count := 0
		for _, e := range evs {
			if e.Kind == events.RequestSent {
				count++
			}
		}
		return err == nil && count >= n
	}, 30*time.Second, 50*time.Millisecond)
}

// TestKilledRunKeepsParseableEvents kills a run with SIGKILL mid-run: events.jsonl parses and
// holds the requests sent.
func TestKilledRunKeepsParseableEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd, out := startAgentsim(t, "run", "--workload", "ocbrowse", "--speedup", "100", "--out", dir)
	waitForEvents(t, filepath.Join(dir, "events.jsonl"), 30)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err, "output: %s", out)
	assert.GreaterOrEqual(t, len(evs), 30)
	assert.NoFileExists(t, filepath.Join(dir, "results.json"), "a killed run writes no results")
}

// TestInterruptedRunWritesResults sends Ctrl-C mid-run: results.json says interrupted, the
// exit code is 130, and every request sent has its terminal event.
func TestInterruptedRunWritesResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd, out := startAgentsim(t, "run", "--workload", "ocbrowse", "--speedup", "100", "--out", dir)
	waitForEvents(t, filepath.Join(dir, "events.jsonl"), 30)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "output: %s", out)
	assert.Equal(t, ExitInterrupted, exit.ExitCode(), "output: %s", out)
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.True(t, res.Interrupted)
	assert.Zero(t, res.Requests.InFlight, "cancelled requests have their terminal events")
	assert.Equal(t, res.Requests.Sent, res.Requests.OK+res.Requests.Errors+res.Requests.Timeouts+res.Requests.Cancelled)
	assert.True(t, strings.Contains(out.String(), "interrupted"), "output: %s", out)
}
