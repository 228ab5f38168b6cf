package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// TestRunImportReplayFit drives the commands end to end against the embedded simulator: a run,
// its directory imported as a trace, the trace replayed (results.json gains its replay object,
// every request with the recorded tokens) and a workload fitted to it that loads.
func TestRunImportReplayFit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded simulator")
	}
	dir := t.TempDir()
	orig, rep, tr := filepath.Join(dir, "orig"), filepath.Join(dir, "rep"), filepath.Join(dir, "t.jsonl")
	code, _, stderr := execute(t, "run", "--workload", "smoke", "--agents", "3", "--speedup", "40", "--out", orig)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = execute(t, "trace", "import", "--from", "run", orig, "-o", tr)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "wrote 6 requests in 3 sessions")

	code, stdout, stderr := execute(t, "replay", tr, "--speedup", "40", "--out", rep)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "6 requests compared, 6 with the recorded token counts")
	res, err := results.Read(rep)
	require.NoError(t, err)
	require.NotNil(t, res.Replay)
	assert.Equal(t, "replay", res.Command)
	assert.Equal(t, 6, res.Replay.SameTokens)
	assert.Equal(t, 6, res.Rounds.Planned)

	code, stdout, stderr = execute(t, "trace", "fit", tr)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "request.output_tokens (tokens, n=6)")
	path := writeFile(t, "fit.yaml", stdout)
	w, err := workloads.Load(workloads.LoadOptions{Workload: path})
	require.NoError(t, err)
	assert.Equal(t, 3, w.Agents)
}

// TestReplayRejectsBadInput: usage errors name the flag or the line, before anything starts.
func TestReplayRejectsBadInput(t *testing.T) {
	trace := writeFile(t, "t.jsonl", `{"schema":"agentsim.trace/v1","source":"x","created":"x"}
{"session":"a","seq":1,"t_s":0,"prompt_tokens":10,"output_tokens":5}
`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "replay takes one trace file"},
		{[]string{"replay", trace, "--mode", "random"}, `mode "random"`},
		{[]string{"replay", trace, "--time-scale", "0"}, "--time-scale 0 is not allowed: want a number from 0.001 to 1000"},
		// Scaled times would overflow.
		{[]string{"replay", trace, "--time-scale", "1e12"}, "--time-scale 1e+12 is not allowed: want a number from 0.001 to 1000"},
		{[]string{"replay", trace, "--set", "pacer.kind=nope"}, "pacer.kind"},
		{[]string{"replay", trace}, "t.jsonl:2: seq = 1"},
		{[]string{"trace", "fit", trace}, "t.jsonl:2: seq = 1"},
		{[]string{"trace", "import", "--from", "run", t.TempDir()}, "events.jsonl"},
	} {
		code, _, stderr := execute(t, c.args...)
		assert.Equal(t, ExitUsage, code, "%s: %s", strings.Join(c.args, " "), stderr)
		assert.Contains(t, stderr, c.want, "%s", strings.Join(c.args, " "))
	}
}

// TestReplayStartsFromTheTrace: against a server of the trace's model, a replay sends that
// model with no word of another, says in config.yaml what it took from the trace, and holds
// the outputs against the recorded lengths it forced, not the workload's output_tokens.
func TestReplayStartsFromTheTrace(t *testing.T) {
	ts := vllmLike(t, "some/model", 8192) // 8 output tokens to every request
	traceOf := func(output int) string {
		return writeFile(t, "t.jsonl", fmt.Sprintf(`{"schema":"agentsim.trace/v1","source":"x","created":"x"}
{"session":"a","seq":0,"t_s":0,"prompt_tokens":300,"output_tokens":%[1]d,"model":"some/model","reasoning_effort":"low","status":200,"e2e_s":0.5}
{"session":"b","seq":0,"t_s":0,"prompt_tokens":400,"output_tokens":%[1]d,"model":"some/model","reasoning_effort":"low","status":200,"e2e_s":0.5}
`, output))
	}

	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := execute(t, "replay", traceOf(8), "--server", ts.URL, "--out", out)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	assert.NotContains(t, stdout+stderr, "does not serve")
	assert.Contains(t, stdout, "model         some/model (from the workload")
	assert.NotContains(t, stdout, "output lengths")
	cfg, err := os.ReadFile(filepath.Join(out, "config.yaml"))
	require.NoError(t, err)
	for _, want := range []string{"model: some/model", "reasoning_effort: low", "output_tokens: 8", "force_output_length: true",
		"'model: some/model, named by 2 of the 2 requests replayed'", "'request.reasoning_effort: low, asked by 2 of the 2 requests replayed'"} {
		assert.Contains(t, string(cfg), want)
	}

	out = filepath.Join(t.TempDir(), "run")
	code, stdout, stderr = execute(t, "replay", traceOf(20), "--server", ts.URL, "--out", out)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	assert.NotContains(t, stdout, "request.output_tokens")
	assert.Contains(t, stdout, "output lengths: 2 of the 2 completed requests forced to their recorded output length (max_tokens with ignore_eos) ended at another (replay − recorded: min -12, max -12 tokens)")
	res, err := results.Read(out)
	require.NoError(t, err)
	_, derived, err := diagnose.FromDir(out)
	require.NoError(t, err)
	assert.Equal(t, diagnose.AllWarnings(res), diagnose.AllWarnings(derived), "the replay's warnings, derived from its directory")

	// --set model=… names the model: a server that does not serve it refuses the replay, as run does.
	code, _, stderr = execute(t, "replay", traceOf(8), "--server", ts.URL, "--set", "model=other", "--out", filepath.Join(t.TempDir(), "run"))
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, `model "other" is not served by`)
}
