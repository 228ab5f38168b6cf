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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServePrintsURLAndStopsOnInterrupt runs `agentsim serve` as a process: it prints the URL
// it listens on, answers there, logs requests in integer microseconds, never prints the API
// key, and exits 0 on Ctrl-C.
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
	assert.Regexp(t, `INFO smg::response: finished processing request method=POST uri=/v1/chat/completions status=200 latency=\d+\n`, string(log))
	assert.NotContains(t, string(log), "s3cret-key")
}
