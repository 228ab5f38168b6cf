package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// buildHarness builds the test harness (testdata/execharness, a tool-calling loop on
// go-openai with its own idle timeout and retries) and returns its path.
func buildHarness(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "execharness")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/execharness").CombinedOutput()
	require.NoError(t, err, "go build testdata/execharness: %s", out)
	return bin
}

// execFast are the settings of a quick exec run: the simulator 20× faster than wall time and
// a watchdog that warns after 20 s and ends the run after 60 s without progress (3 s wall).
var execFast = []string{"--agents", "4", "--speedup", "20", "--set", "watchdog.stall_after=20s", "--set", "watchdog.hang_after=60s"}

// runExec runs `agentsim exec` with args and then the harness and its arguments, in a new
// run directory, and returns the exit code, the output and the directory.
func runExec(t *testing.T, args []string, harness ...string) (int, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	all := append(append([]string{"exec", "--out", dir}, args...), "--")
	code, out, errOut := execute(t, append(all, harness...)...)
	return code, out + errOut, dir
}

// processEnds returns the exit code of each agent's process from the run's agent_done events.
func processEnds(t *testing.T, dir string) map[int]int {
	t.Helper()
	evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	ends := map[int]int{}
	for _, e := range evs {
		if e.Kind == events.AgentDone && e.ExitCode != nil {
			ends[e.Agent] = *e.ExitCode
		}
	}
	return ends
}

// TestExecHealthy runs four copies of the harness against the healthy simulator: each exits 0,
// the verdict is healthy or slow, and the directory is a run that diagnose, trace import and
// replay take.
func TestExecHealthy(t *testing.T) {
	h := buildHarness(t)
	code, out, dir := runExec(t, execFast, h, "-idle-timeout", "30s")
	require.Equal(t, 0, code, out)
	assert.Equal(t, map[int]int{0: 0, 1: 0, 2: 0, 3: 0}, processEnds(t, dir))
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, "exec", res.Command)
	assert.True(t, res.Verdict.Kind.Progressing(), "verdict %s: %s", res.Verdict.Kind, res.Verdict.Summary)
	assert.Greater(t, res.Requests.OK, 4, "a tool loop makes several calls per process")
	for i := 0; i < 4; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "procs", strconv.Itoa(i)+".out"))
		require.NoError(t, err)
		assert.Contains(t, string(b), "done after", "agent %d's stdout", i)
	}

	code, out, diagErr := execute(t, "diagnose", dir)
	require.Equal(t, 0, code, out+diagErr)
	assert.Contains(t, out, string(res.Verdict.Kind))
	trace := filepath.Join(t.TempDir(), "from-run.jsonl")
	code, out, errOut := execute(t, "trace", "import", "--from", "run", dir, "-o", trace)
	require.Equal(t, 0, code, out+errOut)
	code, out, errOut = execute(t, "replay", filepath.Join(dir, "trace.jsonl"), "--speedup", "50", "--out", filepath.Join(t.TempDir(), "replay"))
	assert.Contains(t, finished, code, out+errOut)
}

// TestExecWedge runs the harness against the long-context wedge at a low threshold: the
// watchdog ends the run with a stuck verdict naming the processes whose streams are silent,
// exit 3, and the processes are stopped.
func TestExecWedge(t *testing.T) {
	h := buildHarness(t)
	args := append(execFast, "--sim-fault", "long-context-wedge", "--sim-fault-param", "threshold_tokens=250")
	code, out, dir := runExec(t, args, h)
	require.Equal(t, 3, code, out)
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, results.StalledStreams, res.Verdict.Kind, res.Verdict.Summary)
	assert.Regexp(t, `harness processes \(agents? [0-9, ]+\) wait on streams silent`, res.Verdict.Summary)
	assert.Contains(t, strings.Join(res.Verdict.Evidence, "\n"), `no guard of this harness (go-openai`)
	assert.Contains(t, strings.Join(res.Verdict.Evidence, "\n"), "stopped by agentsim")
}

// TestExecHarnessRetries gives the harness an idle timeout of its own against the wedge: the
// evidence names its retries and the silence before them.
func TestExecHarnessRetries(t *testing.T) {
	h := buildHarness(t)
	args := []string{"--agents", "4", "--speedup", "20", "--set", "watchdog.stall_after=20s", "--set", "watchdog.hang_after=120s",
		"--sim-fault", "long-context-wedge", "--sim-fault-param", "threshold_tokens=250"}
	// 3 s of wall time is 60 s of the simulator's.
	code, out, dir := runExec(t, args, h, "-idle-timeout", "3s", "-retries", "2")
	require.Contains(t, finished, code, out)
	res, err := results.Read(dir)
	require.NoError(t, err)
	ev := strings.Join(res.Verdict.Evidence, "\n")
	assert.Regexp(t, `the harness re-sent [0-9]+ requests? after a failure of its own; the longest silence before one: a[0-9]+-r[0-9]+-1 re-sent at t=[0-9.]+ s after [0-9.]+ s without a byte`, ev)
	assert.Contains(t, ev, "the guard that fired: go-openai has no default guard")
	assert.Positive(t, res.Requests.Retries)
}

// TestExecBlockedOutsideTheStream tells a harness that stopped sending with nothing in flight
// (harness-stopped) from one whose streams are silent (TestExecWedge's stalled-streams).
func TestExecBlockedOutsideTheStream(t *testing.T) {
	h := buildHarness(t)
	code, out, dir := runExec(t, execFast, h, "-hang-after", "2")
	require.Equal(t, 3, code, out)
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, results.HarnessStopped, res.Verdict.Kind, res.Verdict.Summary)
	assert.Contains(t, res.Verdict.Summary, "blocked outside the stream")
	// A process whose task ends within two model calls exits instead; the others are named.
	assert.Regexp(t, `^[1-4] of 4 harness processes \(agents? [0-9, ]+\) run but have sent nothing for ≥ [0-9.]+ s with nothing in flight`, res.Verdict.Summary, out)
}

// TestExecCommandErrors checks that a command that cannot run is an error about the command,
// not a verdict about a server.
func TestExecCommandErrors(t *testing.T) {
	h := buildHarness(t)
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		message string
	}{
		// A program that is nowhere: refused before anything starts.
		{"not found", []string{"--", "no-such-harness-anywhere"}, 2, `command "no-such-harness-anywhere": not found`},
		// No command at all.
		{"no command", nil, 2, "exec needs the harness's command after --"},
		// A harness that fails at once, before any request: its stderr says why.
		{"exits at once", []string{"--speedup", "20", "--", h, "-fail", "bad config: no model"}, 1, `without sending a request to OPENAI_BASE_URL: the command failed, not the server; its stderr ends "bad config: no model"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"exec", "--agents", "2", "--out", filepath.Join(t.TempDir(), "run")}, tc.args...)
			code, out, errOut := execute(t, args...)
			assert.Equal(t, tc.code, code, out+errOut)
			assert.Contains(t, errOut, tc.message)
		})
	}
}

// TestExecResponses runs the harness on the Responses API: the proxy records its streams as
// it does chat completions (their usage from response.completed), and every process ends.
func TestExecResponses(t *testing.T) {
	h := buildHarness(t)
	code, out, dir := runExec(t, execFast, h, "-api", "responses")
	require.Equal(t, 0, code, out)
	assert.Equal(t, map[int]int{0: 0, 1: 0, 2: 0, 3: 0}, processEnds(t, dir))
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, res.Requests.Sent, res.Requests.OK, "every response completed")
	assert.Greater(t, res.Requests.OK, 4, "a tool loop makes several calls per process")
	tr, err := os.ReadFile(filepath.Join(dir, "trace.jsonl"))
	require.NoError(t, err)
	assert.NotContains(t, string(tr), `"tokens_estimated":true`, "the usage of response.completed gives the tokens")
	assert.Contains(t, string(tr), `"tool_calls":`, "the function calls of the replies are counted")
}
