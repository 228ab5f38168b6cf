package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/buildinfo"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// TestCredentialsNeverShown runs against a server named with credentials in its URL and an API
// key: neither reaches stdout, stderr, config.yaml, events.jsonl or results.json, where the
// server URL is shown with its credentials masked.
func TestCredentialsNeverShown(t *testing.T) {
	clk, err := clock.New(1000)
	require.NoError(t, err)
	sim := simtest.NewLoopbackServer(t, simserver.Options{Clock: clk})
	secretURL := strings.Replace(sim.URL, "http://", "http://alice:hunter2@", 1)
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := execute(t, "run", "--workload", writeFile(t, "tiny.yaml", tinyShape),
		"--server", secretURL, "--api-key", "sk-live-42", "--out", dir)
	require.Contains(t, finished, code, "stderr: %s", stderr)
	cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	require.NoError(t, err)
	evs, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	res, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	for where, text := range map[string]string{"stdout": stdout, "stderr": stderr, "config.yaml": string(cfg),
		"events.jsonl": string(evs), "results.json": string(res)} {
		assert.NotContains(t, text, "hunter2", where)
		assert.NotContains(t, text, "sk-live-42", where)
	}
	masked := strings.Replace(sim.URL, "http://", "http://redacted@", 1)
	assert.Contains(t, stdout, masked, "the summary names the server, masked")
	assert.Contains(t, string(cfg), "\nserver: "+masked+"\n")
	assert.Contains(t, string(cfg), "\napi_key: <redacted>\n")
	assert.Contains(t, string(res), `"url": "`+masked+`"`, "results.json names the server, masked")

	// An unreachable server with credentials: the error names it masked.
	code, _, stderr = execute(t, "run", "--workload", "smoke", "--server", "http://bob:s3cret@"+freeAddr(t), "--out", t.TempDir())
	assert.Equal(t, ExitRuntime, code)
	assert.NotContains(t, stderr, "s3cret")
	assert.Contains(t, stderr, "http://redacted@")
}

// TestEmbeddedServerURLShown checks that config.yaml keeps the embedded simulator's URL
// readable: only credentials are redacted, not whole URLs.
func TestEmbeddedServerURLShown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := execute(t, "run", "--workload", writeFile(t, "tiny.yaml", tinyShape), "--speedup", "1000", "--out", dir)
	require.Contains(t, finished, code, "stderr: %s", stderr)
	cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "\nserver: "+simserver.LocalURL+"\n")
}

// TestRunRecordsHowToReproduce checks config.yaml's reproduce section: the build, the command
// line and AGENTSIM_ variables with secrets masked, the seeds, the speedup, the profile and the
// faults with their parameters; and that the file still loads as the run's workload.
func TestRunRecordsHowToReproduce(t *testing.T) {
	t.Setenv("AGENTSIM_API_KEY", "sk-env-7")
	t.Setenv("AGENTSIM_ROUNDS", "1")
	dir := filepath.Join(t.TempDir(), "run")
	wl := writeFile(t, "tiny.yaml", tinyShape)
	args := []string{"run", "--workload", wl, "--speedup", "1000", "--seed", "5", "--sim-seed", "11",
		"--sim-fault", "drop", "--sim-fault-param", "fraction=0.25", "--api-key=sk-flag-8", "--out", dir}
	code, _, stderr := execute(t, args...)
	require.Contains(t, finished, code, "stderr: %s", stderr)
	b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "sk-env-7")
	assert.NotContains(t, string(b), "sk-flag-8")
	var file struct {
		Reproduce results.Reproduction `yaml:"reproduce"`
	}
	require.NoError(t, yaml.Unmarshal(b, &file), "config.yaml:\n%s", b)
	b0 := buildinfo.Read()
	want := results.Reproduction{
		Agentsim: results.Build{Version: b0.Version, Revision: b0.Revision, Go: b0.Go},
		Command: "agentsim run --workload " + wl + " --speedup 1000 --seed 5 --sim-seed 11 --sim-fault drop " +
			"--sim-fault-param fraction=0.25 '--api-key=<redacted>' --out " + dir,
		Env:    []string{"AGENTSIM_API_KEY=<redacted>", "AGENTSIM_ROUNDS=1"},
		Seed:   5,
		Server: results.Embedded,
		Simulator: &results.SimulatorSettings{Profile: "dsv4-pd", Seed: 11, Speedup: 1000,
			Faults: []string{"drop"}, FaultParams: []string{"fraction=0.25"}},
	}
	assert.Equal(t, want, file.Reproduce, "config.yaml:\n%s", b)
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, &want, res.Reproduce, "results.json holds the same reproduction")
	w, err := workloads.LoadRecorded(b)
	require.NoError(t, err, "config.yaml:\n%s", b)
	assert.Equal(t, int64(5), w.Seed)
}

// TestCommandLine checks how a run records its command line: shell-quoted, the API key's value
// and URL credentials masked, in either flag form.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--agents", "8"}, "agentsim run --agents 8"},
		{[]string{"run", "--api-key", "sk-1", "--agents", "8"}, "agentsim run --api-key '<redacted>' --agents 8"},
		{[]string{"run", "--api-key=sk-1"}, "agentsim run '--api-key=<redacted>'"},
		{[]string{"run", "--server", "http://alice:pw@gpu:8000"}, "agentsim run --server http://redacted@gpu:8000"},
		{[]string{"run", "--set", "think_time={dist: exp, mean: 2s}"}, "agentsim run --set 'think_time={dist: exp, mean: 2s}'"},
		{[]string{"run", "--set", "model=it's"}, `agentsim run --set 'model=it'\''s'`},
		{[]string{"run", "--workload", ""}, "agentsim run --workload ''"},
	} {
		assert.Equal(t, tc.want, commandLine(tc.args), "commandLine(%q)", tc.args)
	}
}

// TestVersion checks that agentsim version prints the build information runs record.
func TestVersion(t *testing.T) {
	code, stdout, _ := execute(t, "version")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "agentsim "+buildinfo.Read().String())
}

// TestMetricsURLCredentialsInNoFile gives a --metrics-url with a password that cannot be read:
// the failure reaches samples.jsonl and results.json, and record --watch writes the URL to
// record.json, each with the password masked.
func TestMetricsURLCredentialsInNoFile(t *testing.T) {
	clk, err := clock.New(1000)
	require.NoError(t, err)
	sim := simtest.NewLoopbackServer(t, simserver.Options{Clock: clk})
	metrics := "http://alice:hunter2@" + freeAddr(t) + "/metrics"
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := execute(t, "run", "--workload", writeFile(t, "tiny.yaml", tinyShape), "--server", sim.URL,
		"--metrics-url", metrics, "--out", dir)
	require.Contains(t, finished, code, "stderr: %s", stderr)
	for _, name := range []string{"samples.jsonl", "results.json", "config.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "hunter2", name)
	}
	res, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	assert.Contains(t, string(res), "http://redacted@", "results.json says which URL failed, masked")

	wdir := t.TempDir()
	addr := make(chan string, 1)
	c := (&recordCmd{listening: func(a string) { addr <- a }}).command()
	c.SetArgs([]string{"--upstream", sim.URL, "--listen", "127.0.0.1:0", "--out", filepath.Join(wdir, "trace.jsonl"),
		"--watch", "--metrics-url", strings.Replace(sim.URL, "http://", "http://alice:hunter2@", 1) + "/metrics"})
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.ExecuteContext(ctx) }()
	<-addr
	cancel()
	require.NoError(t, <-done)
	b, err := os.ReadFile(filepath.Join(wdir, "record.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "hunter2")
	assert.Contains(t, string(b), `"metrics_url": "http://redacted@`)
}

// TestNonWorkloadFileNotEchoed gives a .env file where a workload or a --config file is
// wanted: the message names what the file holds and its size, never its content.
func TestNonWorkloadFileNotEchoed(t *testing.T) {
	env := writeFile(t, ".env", "OPENAI_API_KEY=sk-live-0123456789\n")
	for _, args := range [][]string{
		{"run", "--workload", env, "--out", t.TempDir()},
		{"run", "--config", env, "--out", t.TempDir()},
		{"workloads", "show", env},
	} {
		code, _, stderr := execute(t, args...)
		assert.Equal(t, ExitUsage, code, "agentsim %s", strings.Join(args, " "))
		assert.NotContains(t, stderr, "sk-live", "agentsim %s", strings.Join(args, " "))
		assert.Contains(t, stderr, "the file is text (a YAML string) (34 bytes), not a mapping", "agentsim %s", strings.Join(args, " "))
	}
	// An engine profile file likewise.
	code, _, stderr := execute(t, "serve", "--profile", env, "--addr", "127.0.0.1:0")
	assert.Equal(t, ExitUsage, code, stderr)
	assert.NotContains(t, stderr, "sk-live")
	assert.Contains(t, stderr, "the file is text (a YAML string) (34 bytes), not a mapping")
}
