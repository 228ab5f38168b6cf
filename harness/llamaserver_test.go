package harness

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
)

// TestLlamaServerWithAKey: llama-server --api-key --metrics refuses its /metrics without the
// key; the run sends it there too and reads the gauges. Its token counter grows only when a
// request ends, so it gives no gen_tok_s and no warning that one contradicts the harness.
// The summary shows queued (llamacpp:requests_deferred) and says prefill_inflight was not
// found rather than printing it as 0.
func TestLlamaServerWithAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"tiny.gguf"}, NCtx: 8192, Tokens: 400, ITL: 25 * time.Millisecond,
			Metrics: fakeserver.LlamaCpp, APIKey: "sekrit", Deferred: 7}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		var lines []string
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"start_jitter=0s", "request.force_output_length=false",
			"request.output_tokens={dist: uniform, min: 300, max: 500}", "request.max_tokens=1000"}, func(o *Options) {
			o.Target.APIKey = "sekrit"
			o.Sampled = func(_ events.Sample, metrics string) { lines = append(lines, metrics) }
		})
		require.NoError(t, r.err)
		require.NotEmpty(t, lines)
		assert.Equal(t, "server metrics: decode_running ← llamacpp:requests_processing, queued ← llamacpp:requests_deferred; "+
			"not found: prefill_inflight, kv_usage, gen_tok_s", r.res.Server.Metrics)
		assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "%+v", r.res.Requests)
		assert.NotContains(t, strings.Join(r.res.Warnings, "\n"), "contradicts the harness")
		assert.Greater(t, r.res.Server.DecodeRunning.Max, 0.0)
		assert.Equal(t, 7.0, r.res.Server.Queued.Max)
		assert.Regexp(t, `\n  server        decode_running mean \d+\.\d max [1-4]; prefill_inflight not found; queued mean 7\.0 max 7 \(\d+ samples\)\n`, r.out)
	})
}

// TestLlamaServerWithoutMetrics: llama-server started without --metrics answers /metrics 501;
// the summary says the gauges are not available, and why, instead of "mean 0.0 max 0".
func TestLlamaServerWithoutMetrics(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"tiny.gguf"}, NCtx: 8192, Tokens: 4, Metrics: fakeserver.LlamaCppOff}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	assert.Regexp(t, `\n  server        gauges not available: /metrics could not be read \(\d+ samples?\)\n`+
		`                server metrics: not available \(GET `+ts.URL+`/metrics → 501\)\n`, r.out)
	assert.NotContains(t, r.out, "mean 0.0 max 0")
}

// TestKeyRequired: a server that answers 401 to a run that gave no key requires one; the
// error says how to give it, not that a key was refused.
func TestKeyRequired(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"tiny.gguf"}, Tokens: 4, APIKey: "sekrit"}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.Error(t, r.err)
	assert.Equal(t, "server "+ts.URL+" requires an API key: GET /v1/models → 401 without one", r.err.Error())
	assert.ErrorIs(t, r.err, ErrKeyRequired)

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.Target.APIKey = "wrong" })
	require.Error(t, r.err)
	assert.Equal(t, "server "+ts.URL+" refused the API key: GET /v1/models → 401", r.err.Error())
}

// TestContextWindowFromLlamaMeta: llama-server lists no max_model_len; the window one request
// gets is its meta.n_ctx (-c divided among the -np slots), not n_ctx_train. The run warns
// before it starts, bare --fit-context fits to it, and results.json says where it came from.
// A server that lists max_model_len too is read by that first.
func TestContextWindowFromLlamaMeta(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"tiny.gguf"}, NCtx: 1024, Tokens: 8}
	ts := f.Start(t)

	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	assert.Contains(t, r.out, "context: the server's context window is 1024 tokens (meta.n_ctx), below what the workload asks: "+
		"prompts up to ~1400 tokens")
	assert.Equal(t, 1024, r.res.Server.ContextWindow)
	assert.Equal(t, results.FromMetaNCtx, r.res.Server.ContextWindowSource)
	assert.Contains(t, r.out, "model         tiny.gguf (from the server; context window 1024 tokens per slot, meta.n_ctx)")

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.FitContext = FitToServer })
	require.NoError(t, r.err)
	assert.Contains(t, r.out, "context: fitted to the server's window of 1024 tokens (90% of it planned")
	// A slot's window, with slots that may share one KV pool: said, with how to plan for it.
	assert.Contains(t, r.out, "warning: context: fitted to 1024 tokens, one llama.cpp slot's window (meta.n_ctx); if its slots share one KV pool")
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "%+v", r.res.Requests)

	f.MaxModelLen = 512
	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	assert.Equal(t, 512, r.res.Server.ContextWindow, "max_model_len first")
	assert.Equal(t, results.FromMaxModelLen, r.res.Server.ContextWindowSource)
	assert.Contains(t, r.out, "context: the server's context window is 512 tokens (max_model_len)")
}
