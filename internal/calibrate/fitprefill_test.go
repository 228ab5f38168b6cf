package calibrate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
)

// TestClientReadsServerTimings checks that the client keeps llama-server's own account of a
// prompt's work from the last chunk of its stream (the shape tools/server/server-task.cpp
// writes: an empty choices list, usage, then timings).
func TestClientReadsServerTimings(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, frame := range []string{
			`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}`,
			`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" hello"}}],"object":"chat.completion.chunk"}`,
			`{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"object":"chat.completion.chunk"}`,
			`{"choices":[],"object":"chat.completion.chunk","usage":{"completion_tokens":1,"prompt_tokens":318,"total_tokens":319},` +
				`"timings":{"cache_n":291,"prompt_n":27,"prompt_ms":12.412,"prompt_per_token_ms":0.46,"prompt_per_second":2175.3,"predicted_n":1,"predicted_ms":0.01}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", frame)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer s.Close()
	clk, err := clock.New(1)
	require.NoError(t, err)
	c := &Client{URL: s.URL, Model: "m", HTTP: s.Client(), Clock: clk}
	o := c.Send(context.Background(), Request{Messages: []string{"hi"}, MaxTokens: 1})
	require.True(t, o.OK(), o.Err)
	require.NotNil(t, o.Server)
	assert.Equal(t, ServerTimings{Computed: 27, Cached: 291, Prompt: 12412 * time.Microsecond}, *o.Server)
	assert.Equal(t, 318, o.PromptTokens)
}

// promptData is a prompt-length experiment against a colocated server whose prompt compute is
// 8 ms a chunk of 2 048 + 17 µs/token + 60 ns/token² and whose TTFT adds 12 ms of its own work
// outside the steps; with timed, each request carries the server's prompt time, as
// llama-server's do. Each of three repeats varies by a few per cent, as a real server's do.
func promptData(timed bool) *Data {
	d := &Data{}
	start := time.Unix(1000, 0)
	for _, n := range []int{60, 250, 500, 1000, 2000, 3000, 4500} {
		m := Measured{Point: Point{Exp: ExpPrompt, Batch: 1, Prompt: n, Output: 4, Repeats: 3}}
		for rep := range 3 {
			cached := 5.0 // the chat template's first tokens, as llama-server's cache_n shows
			c := float64(n) - cached
			compute := 8e-3*math.Ceil(c/2048) + 17e-6*c + 60e-9*c*(cached+c/2)
			compute *= 1 + 0.02*float64(rep-1)
			ttft := compute + 12e-3*(1+0.05*float64(rep-1))
			o := Obs{Start: start, PromptTokens: n, CompletionTokens: 4}
			o.Chunks = []time.Time{start.Add(seconds(ttft))}
			o.Done = o.Chunks[0]
			if timed {
				o.Server = &ServerTimings{Computed: int(c), Cached: int(cached), Prompt: seconds(compute)}
			}
			m.Runs = append(m.Runs, []Obs{o})
		}
		d.Points = append(d.Points, m)
	}
	return d
}

// colocatedBase is a colocated-mixed base of llama-server's shape: its chunk 2 048, its fixed
// step cost 1 ms.
func colocatedBase(t *testing.T) *engine.Profile {
	p, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	b := *p
	b.PrefillChunkTokens, b.DecodeBase = 2048, time.Millisecond
	return &b
}

// TestPrefillFitsTheServersOwnPromptTime checks that where the server reports its prompt time,
// the compute terms are fitted to it and the rest of TTFT is request_overhead; and that without
// it, the work outside the steps is charged to the compute terms, as before (the per-chunk cost
// takes the 12 ms, which a prompt's short continuation then pays in every chunk).
func TestPrefillFitsTheServersOwnPromptTime(t *testing.T) {
	f := &Fit{Profile: colocatedBase(t)}
	f.prefill(promptData(true), 1, 2048)
	p := f.Profile
	t.Logf("timed: overhead %s, per chunk %s, per token %s, attention %.4g ns", p.RequestOverhead, p.PrefillBase+p.DecodeBase, p.PrefillPerToken, p.PrefillAttnPerToken2Ns)
	within(t, "request_overhead", 12e-3, p.RequestOverhead.Seconds(), 0.05)
	within(t, "per chunk", 8e-3, (p.PrefillBase + p.DecodeBase).Seconds(), 0.1)
	within(t, "prefill_per_token", 17e-6, p.PrefillPerToken.Seconds(), 0.1)
	within(t, "prefill_attn_per_token2_ns", 60, p.PrefillAttnPerToken2Ns, 0.05)
	require.Len(t, f.Errors, 2)
	assert.Equal(t, "server prompt time at batch 1", f.Errors[0].What)
	assert.Less(t, f.Errors[1].RMS, 0.05, "TTFT from the compute and the overhead")

	untimed := &Fit{Profile: colocatedBase(t)}
	untimed.prefill(promptData(false), 1, 2048)
	q := untimed.Profile
	t.Logf("untimed: overhead %s, per chunk %s, per token %s, attention %.4g ns", q.RequestOverhead, q.PrefillBase+q.DecodeBase, q.PrefillPerToken, q.PrefillAttnPerToken2Ns)
	assert.Zero(t, q.RequestOverhead, "the base's")
	assert.Greater(t, (q.PrefillBase + q.DecodeBase).Seconds(), 15e-3, "the overhead is charged per chunk")
	assert.True(t, strings.Contains(strings.Join(untimed.Kept, "\n"), "request_overhead: the server reported no prompt time"), untimed.Kept)
}
