package cli

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServePrintsURLAndStopsOnInterrupt runs `agentsim serve` as a process: it prints the URL
// it listens on and that the access log's times are simulated, answers there, logs the start
// and end of each request (latency in integer microseconds), never prints the API key, and
// exits 0 on Ctrl-C.
func TestServePrintsURLAndStopsOnInterrupt(t *testing.T) {
	accessLog := filepath.Join(t.TempDir(), "access.log")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--addr", "127.0.0.1:0",
		"--access-log", accessLog, "--speedup", "50")
	cmd.Env = append(os.Environ(), "AGENTSIM_TEST_MAIN=1", "AGENTSIM_API_KEY=s3cret-key")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan())
	first := lines.Text()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(first)
	require.NotEmpty(t, url, "first line: %q", first)
	require.True(t, lines.Scan())
	assert.Contains(t, lines.Text(), "access log times are simulated", "said at start, as the speedup is 50")
	assert.Contains(t, lines.Text(), "50×")

	resp, err := http.Get(url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the key from AGENTSIM_API_KEY is required")
	req, _ = http.NewRequest(http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`))
	req.Header.Set("Authorization", "Bearer s3cret-key")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	rest, _ := io.ReadAll(stdout)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit 0 on Ctrl-C")
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("serve did not stop on Ctrl-C")
	}
	assert.NotContains(t, first+string(rest), "s3cret-key")
	log, err := os.ReadFile(accessLog)
	require.NoError(t, err)
	assert.Regexp(t, `INFO smg::request: started processing request request_id=\w+ method=POST uri=/v1/chat/completions\n`, string(log))
	assert.Regexp(t, `INFO smg::response: finished processing request request_id=\w+ method=POST uri=/v1/chat/completions status=200 latency=\d+\n`, string(log))
	assert.NotContains(t, string(log), "s3cret-key")
}

// TestServeOnAllInterfacesWarnsAndStopsOnSIGTERM runs `agentsim serve` on 0.0.0.0: it warns
// that it serves every interface without a key, answers 404 for a model it does not serve and
// 200 for the one --served-model-name names, and on SIGTERM says it is stopping, without the
// Ctrl-C advice, and exits 0.
func TestServeOnAllInterfacesWarnsAndStopsOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--addr", "0.0.0.0:0",
		"--speedup", "50", "--served-model-name", "my-model")
	cmd.Env = append(os.Environ(), "AGENTSIM_TEST_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan())
	port := regexp.MustCompile(`:(\d+) `).FindStringSubmatch(lines.Text())
	require.NotNil(t, port, "first line: %q", lines.Text())
	assert.Contains(t, lines.Text(), "model my-model,", "the first line names the model to ask for")
	url := "http://127.0.0.1:" + port[1]

	post := func(model string) int {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusNotFound, post("deepseek-v4-flash"), "only --served-model-name is served")
	assert.Equal(t, http.StatusOK, post("my-model"))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_, _ = io.ReadAll(stdout)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit 0 on SIGTERM")
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("serve did not stop on SIGTERM")
	}
	assert.Contains(t, stderr.String(), "warning: listening on all interfaces")
	assert.Contains(t, stderr.String(), "without an API key")
	assert.Contains(t, stderr.String(), "agentsim: terminated; stopping\n")
	assert.NotContains(t, stderr.String(), "Ctrl-C")
}

// TestServeRejectsBadReadTimeout checks that a read timeout of zero is a usage error naming
// the flag.
func TestServeRejectsBadReadTimeout(t *testing.T) {
	var out, errOut strings.Builder
	code := Execute(t.Context(), []string{"serve", "--read-timeout", "0s"}, &out, &errOut)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut.String(), "--read-timeout: 0s is not allowed")
}

// TestServeRejectsBadReasoningField checks that a reasoning field the simulator does not
// write is a usage error naming the flag and the two it writes.
func TestServeRejectsBadReasoningField(t *testing.T) {
	var out, errOut strings.Builder
	code := Execute(t.Context(), []string{"serve", "--reasoning-field", "thinking"}, &out, &errOut)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut.String(), `--reasoning-field: "thinking" is not allowed: want reasoning_content or reasoning`)
}

// TestTerminatedRunWithClosedPipesWritesResults runs `agentsim run` as a sweep starts it and
// kills the sweep: the run gets SIGTERM with nothing reading its stdout and stderr. It stops
// as on Ctrl-C and writes results.json; writing to the closed pipes does not kill it.
func TestTerminatedRunWithClosedPipesWritesResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "run", "--workload", "ocbrowse", "--speedup", "1", "--out", dir)
	cmd.Env = append(os.Environ(), "AGENTSIM_TEST_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// The sweep is gone: nothing reads the run's output any more.
	require.NoError(t, stdout.(io.Closer).Close())
	require.NoError(t, stderr.(io.Closer).Close())
	// The run has started once its events file exists (the run prints its summary at the end).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the run never started")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "interrupted: exit 130")
		assert.Equal(t, ExitInterrupted, exit.ExitCode(), "exit code (-1: killed by a signal)")
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("run did not stop on SIGTERM")
	}
	assert.FileExists(t, filepath.Join(dir, "results.json"))
}
