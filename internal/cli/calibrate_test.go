package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// TestCalibrateWritesAProfileAndChecksIt runs calibrate against an agentsim server at speedup
// 200 (whose clock it adopts), then calibrate check with the profile it wrote: the profile
// reads back, says where it came from, and check prints its table.
func TestCalibrateWritesAProfileAndChecksIt(t *testing.T) {
	sim, truth := vllmAtSpeedup200(t)
	defer sim.Close()
	out := filepath.Join(t.TempDir(), "twin.yaml")
	code, stdout, stderr := execute(t, "calibrate", "--server", sim.URL, "--out", out, "--base", "ideal",
		"--max-concurrency", "4", "--max-prompt", "2048", "--repeats", "1", "--chunk-tokens", "8192")
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "plan: ")
	y, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(y), "# calibrated from "+sim.URL)
	p, err := engine.LoadProfile(out)
	require.NoError(t, err, "the profile reads back")
	assert.Equal(t, truth.Model, p.Model)

	code, stdout, stderr = execute(t, "calibrate", "check", "--profile", out, "--server", sim.URL, "--agents", "2", "--rounds", "2")
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, fig := range []string{"TTFT p50", "ITL p90", "TPOT p50", "e2e p90", "throughput"} {
		assert.Contains(t, stdout, fig)
	}
	assert.Contains(t, stdout, "twin's own lag", "check says how late its twin delivered tokens")
	assert.Regexp(t, `(?m)^2 +ref TTFT +\S+ +\S+ +\S+ +[-+]`, stdout, "each concurrency's reference rows")
	assert.Regexp(t, `(?m)^2 +ref TPOT `, stdout)
	assert.Regexp(t, `reference \(a fresh 1024-token prompt alone after a flush, .*\): TTFT server .* over 2\), twin .*; TPOT server`, stdout,
		"check compares the twin with the server on a shape the fit saw, before each of its two server runs")
}

// TestCalibrateCheckSendsFreshText: a second calibrate check against the same server sends no
// text the first sent (the server's prefix cache holds the first's, and would answer it at a
// fraction of its prefill), and --seed with the seed the first printed sends it all again.
func TestCalibrateCheckSendsFreshText(t *testing.T) {
	sim, _ := vllmAtSpeedup200(t)
	defer sim.Close()
	target, err := url.Parse(sim.URL)
	require.NoError(t, err)
	var mu sync.Mutex
	var sent []string // the message texts of every request, in the order received
	rp := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if !assert.NoError(t, err) { // the handler's goroutine is not the test's: no FailNow here
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) == nil {
			mu.Lock()
			for _, m := range req.Messages {
				sent = append(sent, m.Content)
			}
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()
	check := func(extra ...string) (string, map[string]bool) {
		mu.Lock()
		sent = nil
		mu.Unlock()
		args := append([]string{"calibrate", "check", "--profile", "vllm-llama3-8b-h100", "--server", front.URL, "--agents", "1", "--rounds", "2"}, extra...)
		code, stdout, stderr := execute(t, args...)
		require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		mu.Lock()
		defer mu.Unlock()
		texts := map[string]bool{}
		for _, s := range sent {
			texts[s] = true
		}
		require.NotEmpty(t, texts)
		return stdout, texts
	}
	shared := func(a, b map[string]bool) int {
		n := 0
		for s := range a {
			if b[s] {
				n++
			}
		}
		return n
	}
	out1, first := check()
	out2, second := check()
	assert.NotEqual(t, seedOf(t, out1), seedOf(t, out2), "each check draws its own seed")
	assert.Zero(t, shared(first, second), "the second check sends none of the first's texts")
	_, again := check("--seed", strconv.FormatInt(seedOf(t, out1), 10))
	assert.Equal(t, len(first), shared(first, again), "--seed sends the first check's texts again")
}

// seedOf reads the seed calibrate check printed.
func seedOf(t *testing.T, stdout string) int64 {
	t.Helper()
	m := regexp.MustCompile(`prompts from seed (\d+) `).FindStringSubmatch(stdout)
	require.NotNil(t, m, "no seed in:\n%s", stdout)
	n, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	return n
}

// TestCalibrateNeedsServerAndOut checks the usage error of a calibrate without its targets.
func TestCalibrateNeedsServerAndOut(t *testing.T) {
	code, _, stderr := execute(t, "calibrate", "--out", "x.yaml")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--server (or --from) and --out are required")
}

// TestCalibrateFromRecordedRuns fits a profile from a recorded run's directory: it reads
// back, and its comments say what the traffic could not identify.
func TestCalibrateFromRecordedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "--out", dir, "--speedup", "200", "--set", "agents=4"}, quickSmoke...)
	code, stdout, stderr := execute(t, args...)
	require.Contains(t, finished, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	out := filepath.Join(t.TempDir(), "from.yaml")
	code, stdout, stderr = execute(t, "calibrate", "--from", dir, "--out", out)
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	y, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(y), "recorded traffic has no designed probe of it")
	assert.Contains(t, string(y), "tokenizer_ratio: ")
	_, err = engine.LoadProfile(out)
	require.NoError(t, err, "the profile reads back")
}

// TestCalibrateCheckWorkloadFile runs calibrate check with the user's own workload file
// against an agentsim server at speedup 200 and a twin of its own profile: it runs the file
// three times, keeps the runs under --out, and prints the table for the file's 2 agents.
func TestCalibrateCheckWorkloadFile(t *testing.T) {
	sim, _ := vllmAtSpeedup200(t)
	defer sim.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`name: mine
agents: 2
rounds: 2
seed: 3
start_jitter: 0s
context: {system_tokens: 100, initial_tokens: 300, read_tokens: {dist: uniform, min: 50, max: 100}, max_context_tokens: 4096}
request: {stream: true, max_tokens: 64, output_tokens: {dist: uniform, min: 16, max: 32}, force_output_length: true}
retry: {max: 0}
tool_time: 0s
think_time: 0s
pacer: {kind: slots, slots: 2}
`), 0o644))
	keep := filepath.Join(dir, "runs")
	code, stdout, stderr := execute(t, "calibrate", "check", "--profile", "vllm-llama3-8b-h100", "--server", sim.URL,
		"--workload", file, "--out", keep, "--twin-speedup", "200")
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, run := range []string{"server-1", "server-2", "twin"} {
		assert.FileExists(t, filepath.Join(keep, run, "events.jsonl"))
	}
	assert.Contains(t, stdout, "2       TTFT p50", "the table's rows name the file's 2 agents:\n%s", stdout)
	assert.Contains(t, stdout, "runs kept in "+keep)
	t.Log(stdout)
}

// TestTwinLagLine: check says how late its twin delivered tokens, and advises a lower
// --twin-speedup only when that lag is a visible share of the twin's TTFT.
func TestTwinLagLine(t *testing.T) {
	quiet := twinLagLine(clock.LagStats{P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond}, 200*time.Millisecond, 10)
	assert.Contains(t, quiet, "p50 1ms, p99 2ms, max 3ms")
	assert.NotContains(t, quiet, "lower --twin-speedup")
	loaded := twinLagLine(clock.LagStats{P50: 20 * time.Millisecond, P99: 80 * time.Millisecond, Max: 300 * time.Millisecond}, 200*time.Millisecond, 10)
	assert.Contains(t, loaded, "check again with a lower --twin-speedup")
	assert.NotContains(t, twinLagLine(clock.LagStats{P99: time.Second}, 200*time.Millisecond, 1), "lower --twin-speedup", "at speedup 1 there is nothing lower to advise")
}

// vllmAtSpeedup200 serves the vllm-llama3-8b-h100 profile on loopback at speedup 200, the
// server calibrate's tests fit; it returns the server and its profile.
func vllmAtSpeedup200(t *testing.T) (*simtest.Server, *engine.Profile) {
	t.Helper()
	clk, err := clock.New(200)
	require.NoError(t, err)
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	return simtest.NewLoopbackServer(t, simserver.Options{Clock: clk, Profile: truth}), truth
}
