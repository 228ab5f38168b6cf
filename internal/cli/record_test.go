//lint:file-ignore SA1019 max_tokens is the field the inference servers agentsim targets read.

package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/trace"
)

// TestRecordFlagErrors checks the command's refusals and their exit codes.
func TestRecordFlagErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	require.NoError(t, os.WriteFile(existing, []byte("x"), 0o644))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		// No upstream and no trace file.
		{"missing", []string{"record"}, ExitUsage, "--upstream is required"},
		// An upstream that is not an http URL.
		{"scheme", []string{"record", "--upstream", "ftp://x", "--out", filepath.Join(dir, "a.jsonl")}, ExitUsage, `--upstream "ftp://x": want an http or https URL`},
		// Gauges without --watch.
		{"metrics", []string{"record", "--upstream", "http://x", "--out", filepath.Join(dir, "a.jsonl"), "--metrics-url", "http://x/metrics"}, ExitUsage, "--metrics-url is read only with --watch"},
		// A trace that exists is never overwritten.
		{"exists", []string{"record", "--upstream", "http://x", "--out", existing}, ExitRuntime, "exists; a recording never overwrites a trace"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := Execute(context.Background(), tc.args, &out, &errb)
		assert.Equal(t, tc.code, code, "%s: agentsim %s", tc.name, strings.Join(tc.args, " "))
		assert.Contains(t, errb.String(), tc.want, tc.name)
	}
}

// TestRecordCommand records two turns of a conversation through the command on loopback,
// with --watch, stops it as Ctrl-C would, and reads the trace and the watch directory back.
func TestRecordCommand(t *testing.T) {
	sim := simtest.NewLoopbackServer(t, simserver.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "trace.jsonl")
	addr := make(chan string, 1)
	rc := &recordCmd{listening: func(a string) { addr <- a }}
	c := rc.command()
	c.SetArgs([]string{"--upstream", sim.URL, "--listen", "127.0.0.1:0", "--out", out, "--watch", "--metrics-url", sim.URL + "/metrics"})
	var stdout, stderr bytes.Buffer
	c.SetOut(&stdout)
	c.SetErr(&stderr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.ExecuteContext(ctx) }()
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = "http://" + <-addr + "/v1"
	client := openai.NewClientWithConfig(cfg)
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "first"}}
	for turn := 0; turn < 2; turn++ {
		resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "deepseek-v4-flash", MaxTokens: 8, Messages: msgs})
		require.NoError(t, err)
		msgs = append(msgs, resp.Choices[0].Message, openai.ChatCompletionMessage{Role: "user", Content: "next"})
	}
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, stderr.String(), "recorded 2 requests to "+out)
	assert.Contains(t, stdout.String(), "verdict: healthy")
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	rd, err := trace.NewReader(f, out)
	require.NoError(t, err)
	assert.Equal(t, "record:"+sim.URL, rd.Header().Source)
	first, err := rd.Next()
	require.NoError(t, err)
	second, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, first.Session, second.Session, "the second turn continues the conversation")
	require.NotNil(t, second.Extends)
	assert.Equal(t, 0, *second.Extends)
	for _, name := range []string{"events.jsonl", "samples.jsonl", "config.yaml", "record.json"} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	var dout, derr bytes.Buffer
	assert.Equal(t, ExitOK, Execute(context.Background(), []string{"diagnose", dir}, &dout, &derr), derr.String())
	assert.Contains(t, dout.String(), "seen from a recording proxy")

	// Imported as a run, the directory gives the requests as recorded: the model the harness
	// asked for, not the watch workload's placeholder.
	var iout, ierr bytes.Buffer
	assert.Equal(t, ExitOK, Execute(context.Background(), []string{"trace", "import", "--from", "run", dir}, &iout, &ierr), ierr.String())
	assert.Contains(t, iout.String(), `"model":"deepseek-v4-flash"`)
	assert.Contains(t, ierr.String(), "was recorded by a proxy")
}

// TestRecordRunThroughResponses: `agentsim run --set request.api=responses` against a
// simulator through `agentsim record` — every request goes to /v1/responses, and every line of
// the trace says so, its sessions and their extends inferred from the input items.
func TestRecordRunThroughResponses(t *testing.T) {
	clk, err := clock.New(50)
	require.NoError(t, err)
	sim := simtest.NewLoopbackServer(t, simserver.Options{Clock: clk})
	dir := t.TempDir()
	out := filepath.Join(dir, "trace.jsonl")
	addr := make(chan string, 1)
	rc := &recordCmd{listening: func(a string) { addr <- a }}
	c := rc.command()
	c.SetArgs([]string{"--upstream", sim.URL, "--listen", "127.0.0.1:0", "--out", out})
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.ExecuteContext(ctx) }()
	var rout, rerr bytes.Buffer
	code := Execute(context.Background(), []string{"run", "--server", "http://" + <-addr, "--workload", "smoke",
		"--set", "request.api=responses", "--set", "tools.set=browse", "--out", filepath.Join(dir, "run")}, &rout, &rerr)
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, ExitOK, code, "%s%s", rout.String(), rerr.String())
	assert.Contains(t, rout.String(), "8 sent: 8 ok")

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	rd, err := trace.NewReader(f, out)
	require.NoError(t, err)
	sessions, extends := map[string]bool{}, 0
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		assert.Equal(t, trace.APIResponses, r.API, "%+v", r)
		assert.Positive(t, r.ToolsTokens)
		sessions[r.Session] = true
		if r.Extends != nil {
			extends++
		}
	}
	assert.Len(t, sessions, 4, "one session per agent")
	assert.Equal(t, 4, extends, "each agent's second round extends its first")
}

// TestRecordLogConcurrent sends requests at once through record to a server that is not
// there: the proxy says so on stderr from every request's goroutine, and the command's
// stderr (here one buffer) must take their lines one at a time (go test -race).
func TestRecordLogConcurrent(t *testing.T) {
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	upstream := "http://" + gone.Addr().String()
	require.NoError(t, gone.Close()) // connections to it are refused
	out := filepath.Join(t.TempDir(), "trace.jsonl")
	addr := make(chan string, 1)
	rc := &recordCmd{listening: func(a string) { addr <- a }}
	c := rc.command()
	c.SetArgs([]string{"--upstream", upstream, "--listen", "127.0.0.1:0", "--out", out})
	var stdout, stderr bytes.Buffer
	c.SetOut(&stdout)
	c.SetErr(&stderr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.ExecuteContext(ctx) }()
	url := "http://" + <-addr + "/v1/chat/completions"
	const n = 8
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Post(url, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
			if assert.NoError(t, err) {
				assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, n, strings.Count(stderr.String(), "POST /v1/chat/completions: "), "one line a failed request:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), "recorded 8 requests to "+out)
}
