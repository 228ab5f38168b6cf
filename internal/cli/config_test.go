package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// tinyShape makes a run cheap: short prompts, 4-token answers, no waits.
const tinyShape = `name: tiny
context: {system_tokens: 10, initial_tokens: 10, max_context_tokens: 1024}
request: {max_tokens: 8, output_tokens: 4, force_output_length: true}
`

// resolved is what a run resolved for the keys the precedence test follows.
type resolved struct {
	Agents, Rounds int
	Seed           int64
	Duration       time.Duration
	Slots          int
}

// runResolved runs agentsim with args on the embedded simulator and returns what it
// resolved, read back from the run's config.yaml. The run must finish; its verdict does not
// matter (answers this short can look serialized to the analyzer).
func runResolved(t *testing.T, args ...string) resolved {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	args = append(args, "--speedup", "1000", "--out", dir)
	code, out, stderr := agentsim(t, args...)
	require.Contains(t, finished, code, "agentsim %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, stderr)
	b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	require.NoError(t, err)
	w, err := workloads.LoadRecorded(b)
	require.NoError(t, err, "config.yaml:\n%s", b)
	return resolved{Agents: w.Agents, Rounds: w.Rounds, Seed: w.Seed, Duration: w.Duration, Slots: w.Pacer.Slots}
}

// TestPrecedence runs `agentsim run` with agents, rounds, seed, duration and pacer.slots set
// at more and more layers — built-in defaults < workload file < --config FILE < AGENTSIM_…
// environment < flags and --set — and checks that each layer overrides the one below it, and
// that of a flag and --set for one key the later on the command line wins.
func TestPrecedence(t *testing.T) {
	file := writeFile(t, "w.yaml", tinyShape+"agents: 2\nrounds: 2\nseed: 2\nduration: 2h\npacer: {kind: slots, slots: 2}\n")
	bare := writeFile(t, "bare.yaml", tinyShape)
	config := writeFile(t, "c.yaml", "agents: 3\nrounds: 3\nseed: 3\nduration: 3h\npacer:\n  slots: 3\n")
	env := map[string]string{"AGENTSIM_AGENTS": "4", "AGENTSIM_ROUNDS": "4", "AGENTSIM_SEED": "4",
		"AGENTSIM_DURATION": "4h", "AGENTSIM_PACER_SLOTS": "4"}
	flags := []string{"--agents", "5", "--rounds", "5", "--seed", "5", "--duration", "5h", "--set", "pacer.slots=5"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want resolved
	}{
		// The workload file sets none of the keys: the built-in defaults (pacer unlimited).
		{"defaults", nil, []string{"run", "--workload", bare}, resolved{1, 1, 1, 0, 0}},
		// The workload file over the defaults.
		{"workload file", nil, []string{"run", "--workload", file}, resolved{2, 2, 2, 2 * time.Hour, 2}},
		// --config over the workload file.
		{"--config", nil, []string{"run", "--workload", file, "--config", config}, resolved{3, 3, 3, 3 * time.Hour, 3}},
		// The environment over --config.
		{"environment", env, []string{"run", "--workload", file, "--config", config}, resolved{4, 4, 4, 4 * time.Hour, 4}},
		// Flags and --set over the environment.
		{"flags", env, append([]string{"run", "--workload", file, "--config", config}, flags...), resolved{5, 5, 5, 5 * time.Hour, 5}},
		// Of a flag and --set for one key, the later on the command line wins, either way round.
		{"flag then --set, --set then flag", env, append([]string{"run", "--workload", file, "--config", config}, append(flags,
			"--set", "agents=6", "--set", "rounds=6", "--rounds", "1", "--set", "pacer.slots=6", "--set", "seed=6", "--duration", "6h")...),
			resolved{6, 1, 6, 6 * time.Hour, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			assert.Equal(t, tc.want, runResolved(t, tc.args...), "agentsim %s with %v", strings.Join(tc.args, " "), tc.env)
		})
	}
}

// TestEnvSettings checks that the flags that are no workload key take their AGENTSIM_
// variables from the same reading of the environment, beneath the flag.
func TestEnvSettings(t *testing.T) {
	tiny := writeFile(t, "tiny.yaml", tinyShape)
	t.Run("workload, speedup and api key", func(t *testing.T) {
		t.Setenv("AGENTSIM_WORKLOAD", tiny)
		t.Setenv("AGENTSIM_SPEEDUP", "500")
		t.Setenv("AGENTSIM_API_KEY", "sk-test-1")
		dir := filepath.Join(t.TempDir(), "run")
		code, out, stderr := agentsim(t, "run", "--out", dir)
		require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, "tiny", res.Workload, "AGENTSIM_WORKLOAD")
		assert.Equal(t, 500.0, res.Speedup, "AGENTSIM_SPEEDUP")
		b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
		require.NoError(t, err)
		assert.Contains(t, string(b), "api_key: <redacted>\n", "AGENTSIM_API_KEY reached the run")
		assert.NotContains(t, string(b)+out+stderr, "sk-test-1")
	})
	t.Run("the flag wins", func(t *testing.T) {
		t.Setenv("AGENTSIM_SPEEDUP", "not a number")
		dir := filepath.Join(t.TempDir(), "run")
		code, out, stderr := agentsim(t, "run", "--workload", tiny, "--speedup", "1000", "--out", dir)
		require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, 1000.0, res.Speedup)
	})
	t.Run("server", func(t *testing.T) {
		addr := freeAddr(t)
		t.Setenv("AGENTSIM_SERVER", "http://"+addr)
		code, _, stderr := agentsim(t, "run", "--workload", tiny, "--out", t.TempDir())
		assert.Equal(t, ExitRuntime, code, "stderr: %s", stderr)
		assert.Contains(t, stderr, addr, "AGENTSIM_SERVER names the server")
	})
	t.Run("every problem at once", func(t *testing.T) {
		t.Setenv("AGENTSIM_SPEEDUP", "fast")
		t.Setenv("AGENTSIM_AGENTZ", "3")
		t.Setenv("AGENTSIM_ROUNDS", "0")
		code, _, stderr := agentsim(t, "run", "--workload", tiny, "--set", "pacer.slots")
		assert.Equal(t, ExitUsage, code, "stderr: %s", stderr)
		for _, want := range []string{
			"invalid configuration, 4 problems:",
			`  AGENTSIM_SPEEDUP: "fast" is not allowed: want a number`,
			`  --set pacer.slots: "pacer.slots" is not allowed: want key=value, e.g. pacer.slots=16`,
			"  AGENTSIM_AGENTZ: unknown key: no workload key is named AGENTSIM_AGENTZ; did you mean AGENTSIM_AGENTS (agents)?",
			"  rounds: 0 is not allowed: want an integer from 1 to 100000",
		} {
			assert.Contains(t, stderr, want)
		}
	})
	t.Run("bench", func(t *testing.T) {
		t.Setenv("AGENTSIM_CONCURRENCY", "0")
		t.Setenv("AGENTSIM_SAMPLE_INTERVAL", "soon")
		code, _, stderr := agentsim(t, "bench")
		assert.Equal(t, ExitUsage, code, "stderr: %s", stderr)
		assert.Contains(t, stderr, `AGENTSIM_SAMPLE_INTERVAL=soon: sample-interval: "soon" is not allowed: want a duration such as 750ms or 2s`)
		assert.Contains(t, stderr, "--concurrency 0 is not allowed: want a whole number from 1 to 10000")
	})
}
