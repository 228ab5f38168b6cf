package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
)

// runCommand runs one command as Execute would and returns its exit code, stdout and stderr.
func runCommand(t *testing.T, c *cobra.Command, args ...string) (int, string, string) {
	t.Helper()
	return runCommandIn(t, t.Context(), c, args...)
}

// runCommandIn is runCommand with ctx as the interrupt.
func runCommandIn(t *testing.T, ctx context.Context, c *cobra.Command, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	err := c.ExecuteContext(ctx)
	if err != nil && !silent(err) {
		fmt.Fprintf(&errOut, "agentsim: %v\n", err)
	}
	return exitCode(err), out.String(), errOut.String()
}

// agentsim runs the whole command line in-process, as the binary would.
func agentsim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var benchResult = regexp.MustCompile(`(?m)^RESULT N=(\d+) max_tokens=(\d+) wall=[\d.]+s ok=(\d+)/(\d+) `)

// TestBenchEmbedded runs `agentsim bench` against the embedded simulator at speedup 20 in a
// bubble and checks its output and its run directory.
func TestBenchEmbedded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		code, out, stderr := runCommand(t, (&benchCmd{}).command(), "--speedup", "20", "--out", dir)
		require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
		assert.Contains(t, out, "agentsim bench: 16 requests at once × 128 output tokens, ~200-token prompts, against embedded simulator dsv4-pd (faults none), speedup 20")
		assert.Regexp(t, `(?m)^server metrics: decode_running ← `, out)
		assert.Regexp(t, `(?m)^t= 0\.0s decode_running=0\.0 prefill_inflight=`, out)
		assert.Regexp(t, `(?m)^RESULT N=16 max_tokens=128 wall=5\.\ds ok=16/16 lat_min=`, out)
		assert.Regexp(t, `(?m)^  prompt   200 tokens requested per request, 20\d counted by the server$`, out)

		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, "bench", res.Command)
		assert.Equal(t, results.Requests{Sent: 16, OK: 16}, res.Requests)
		assert.Equal(t, 16, res.Latency.E2E.N)
		assert.Equal(t, 20.0, res.Speedup)
		require.NotNil(t, res.Bench)
		assert.Equal(t, 16, res.Bench.OK)
		assert.NotEmpty(t, res.Bench.Samples)
		b, err := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
		require.NoError(t, err)
		assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), len(res.Bench.Samples), "samples.jsonl holds every sample")
	})
}

// TestBenchInterrupted interrupts a bench 2 simulated seconds in, before any request has
// finished: the requests are cancelled, results.json says so and the exit code is 130.
func TestBenchInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(2*time.Second, cancel)
		dir := filepath.Join(t.TempDir(), "run")
		code, out, stderr := runCommandIn(t, ctx, (&benchCmd{}).command(), "--out", dir)
		require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
		assert.Regexp(t, `(?m)^RESULT N=16 max_tokens=128 wall=2\.0s ok=0/16 lat_min=n/a`, out)
		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.True(t, res.Interrupted)
		assert.Equal(t, results.Requests{Sent: 16, Cancelled: 16}, res.Requests)
	})
}

// benchServer is an OpenAI-compatible streaming server on a real socket: /v1/models lists one
// model, chat completions that set ignore_eos stream max_tokens one-word chunks at once with
// a prompt of 210 tokens, and nothing else exists (/metrics answers 404). With failEvery n >
// 0, every n-th chat request gets 503.
func benchServer(t *testing.T, failEvery int) *httptest.Server {
	f := &fakeserver.Server{Models: []string{"fake-model"}, RequireIgnoreEOS: true, PromptTokens: 210, FailEvery: failEvery}
	return f.Start(t)
}

// TestBenchWithoutMetrics checks that a server without /metrics still gets the full benchmark,
// with the not-available line and the client's own view in the sample lines.
func TestBenchWithoutMetrics(t *testing.T) {
	srv := benchServer(t, 0)
	dir := t.TempDir()
	code, out, stderr := agentsim(t, "bench", "--server", srv.URL, "--out", dir)
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, out, "server metrics: not available (GET "+srv.URL+"/metrics → 404)")
	assert.Regexp(t, `(?m)^t= 0\.0s in_flight=\d+ chunks=\d+$`, out)
	assert.Regexp(t, `(?m)^RESULT N=16 max_tokens=128 wall=\d+\.\d+s ok=16/16 lat_min=`, out)
	assert.Contains(t, out, "200 tokens requested per request, 210 counted by the server")
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, 16, res.Bench.OK)
	assert.Equal(t, results.External, res.Server.Kind)
	assert.Contains(t, res.Server.Metrics, "not available")
	assert.Zero(t, res.Server.DecodeRunning.N, "no server gauge")
}

// TestBenchHalfFailing checks a server that answers 503 to every second request: the run goes
// on, counts the failures and exits 3.
func TestBenchHalfFailing(t *testing.T) {
	srv := benchServer(t, 2)
	dir := t.TempDir()
	code, out, stderr := agentsim(t, "bench", "--server", srv.URL, "--out", dir)
	assert.Equal(t, ExitVerdict, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	m := benchResult.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Equal(t, []string{"16", "128", "8", "16"}, m[1:])
	assert.Contains(t, out, "failed   8/16: 8 × http_status 503")
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, 8, res.Bench.Failed)
	assert.Equal(t, 8, res.Bench.OK)
	assert.Equal(t, results.Requests{Sent: 16, OK: 8, Errors: 8, Failed: 8}, res.Requests)
	assert.Equal(t, results.Errors, res.Verdict.Kind)
}

// TestBenchUnreachable checks that an unreachable server fails fast with exit 1, naming it,
// before anything is sent.
func TestBenchUnreachable(t *testing.T) {
	addr := freeAddr(t)
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, out, stderr := agentsim(t, "bench", "--server", "http://"+addr, "--out", dir)
	assert.Equal(t, ExitRuntime, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, "unreachable")
	assert.Contains(t, stderr, addr)
	assert.NotContains(t, out, "RESULT")
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.NoDirExists(t, dir, "nothing written before the server answers")
}

// TestBenchRejectsBadFlags checks that each bad flag exits 2 naming the flag, its value and
// what is allowed, before any server is started.
func TestBenchRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		msg  []string
	}{
		// No requests at all.
		{"zero concurrency", []string{"bench", "--concurrency", "0"}, []string{"--concurrency 0 is not allowed: want a whole number ≥ 1"}},
		// A sweep with a word in it.
		{"sweep not a number", []string{"bench", "--sweep", "1,x,64"}, []string{`--sweep "1,x,64": "x" is not allowed: want comma-separated whole numbers ≥ 1`}},
		// A sweep with a zero.
		{"sweep zero", []string{"bench", "--sweep", "0,16"}, []string{`"0" is not allowed`}},
		// Both --sweep and --concurrency.
		{"sweep and concurrency", []string{"bench", "--sweep", "1,16", "--concurrency", "8"}, []string{"--sweep replaces --concurrency"}},
		// Every problem at once.
		{"several", []string{"bench", "--max-tokens", "-5", "--prompt-tokens", "0", "--sample-interval", "0s"},
			[]string{"--max-tokens -5 is not allowed", "--prompt-tokens 0 is not allowed", "--sample-interval 0s is not allowed: want a duration > 0"}},
		// Not a number at all: pflag's own message, still exit 2.
		{"concurrency word", []string{"bench", "--concurrency", "many"}, []string{"--concurrency"}},
		// --speedup only applies to the embedded simulator.
		{"speedup with server", []string{"bench", "--server", "http://127.0.0.1:1", "--speedup", "20"}, []string{"--speedup applies only to the embedded simulator"}},
		// An output no server returns: the rates would be nonsense.
		{"max tokens too many", []string{"bench", "--max-tokens", "10000000"}, []string{"--max-tokens 10000000 is not allowed: want a whole number from 1 to 1000000"}},
		// compare shares the request-shape checks.
		{"compare zero concurrency", []string{"compare", "--concurrency", "0"}, []string{"--concurrency 0 is not allowed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := agentsim(t, tc.args...)
			assert.Equal(t, ExitUsage, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
			for _, m := range tc.msg {
				assert.Contains(t, stderr, m)
			}
		})
	}
}

// TestBenchServerIgnoresMaxTokens checks a server that ignores max_tokens and returns one
// token per request, with and without a usage chunk: bench does not pass it as "ok 2/2,
// 0.0 tok/s" but says on a short line that every request came back short, records the count in
// results.json and exits 3.
func TestBenchServerIgnoresMaxTokens(t *testing.T) {
	for _, usage := range []bool{true, false} {
		t.Run(fmt.Sprintf("usage=%v", usage), func(t *testing.T) {
			frames := []string{`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}
			if usage {
				frames = append(frames, `{"choices":[],"usage":{"prompt_tokens":210,"completion_tokens":1,"total_tokens":211}}`)
			}
			srv := streamingServer(t, frames...)
			dir := filepath.Join(t.TempDir(), "run")
			code, out, stderr := agentsim(t, "bench", "--server", srv.URL, "--concurrency", "2", "--out", dir)
			assert.Equal(t, ExitVerdict, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
			assert.Contains(t, out, "ok=2/2")
			assert.Regexp(t, `(?m)^  short    2/2 completed with fewer than the 128 output tokens asked \(fewest [12]\): the server ignored max_tokens or ignore_eos`, out)
			res, err := results.Read(dir)
			require.NoError(t, err)
			assert.Equal(t, 2, res.Bench.Short)
			assert.Equal(t, 2, res.Bench.OK)
			assert.Contains(t, strings.Join(res.Verdict.Evidence, "\n"), "2 returned fewer than 128 output tokens")
		})
	}
}

// TestBenchStoppedAtContextWindow checks a server that stops each request at its context window
// (as llama.cpp stops a slot at its edge: finish_reason length below max_tokens): the short
// line says so, with the prompt plus output it reached, instead of blaming max_tokens.
func TestBenchStoppedAtContextWindow(t *testing.T) {
	srv := streamingServer(t, `{"choices":[{"index":0,"delta":{"role":"assistant","content":"a"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":" b"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":254,"completion_tokens":2,"total_tokens":256}}`)
	code, out, stderr := agentsim(t, "bench", "--server", srv.URL, "--concurrency", "2", "--out", filepath.Join(t.TempDir(), "run"))
	assert.Equal(t, ExitVerdict, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Regexp(t, `(?m)^  short    2/2 completed with fewer than the 128 output tokens asked \(fewest 2\): the server stopped them at its context window \(finish_reason length with prompt \+ output up to 256 tokens\)`, out)
	assert.NotContains(t, out, "ignored max_tokens")
}

// streamingServer is an OpenAI-compatible server of one model, fake-model, that answers every
// chat completion with the given data frames, then [DONE]. It stops when the test ends.
func streamingServer(t *testing.T, frames ...string) *httptest.Server {
	return (&fakeserver.Server{Models: []string{"fake-model"}, Frames: frames}).Start(t)
}

// TestBenchOpenLoopFlags checks the open-loop flags' usage errors: each names the flag, what
// was wrong and what is allowed, all at once, exit 2.
func TestBenchOpenLoopFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--rate", "10"}, []string{"--rate needs --duration or --requests to end the test"}},
		{[]string{"--rate", "0", "--arrivals", "bursty", "--requests", "0"}, []string{"--rate 0 is not allowed: want requests per second from 0.001 to 1e+06",
			`--arrivals "bursty" is not allowed: want poisson or constant`, "--requests 0 is not allowed: want a whole number from 1 to 10000"}},
		{[]string{"--rate", "1000", "--duration", "1m"}, []string{"--rate 1000 × --duration 1m0s sends 60000 requests: want at most 10000"}},
		{[]string{"--rate", "10", "--requests", "5", "--concurrency", "4"}, []string{"--rate replaces --concurrency"}},
		{[]string{"--duration", "10s"}, []string{"--duration applies to an open-loop test: give --rate too"}},
	} {
		code, _, stderr := execute(t, append([]string{"bench", "--out", filepath.Join(t.TempDir(), "b")}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, "%v", tc.args)
		}
	}
}
