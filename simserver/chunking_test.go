package simserver_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// chunkCounts scrapes the stream chunk counters: chunks, tokens, chunks behind, chunks
// coalesced.
func (ts *testServer) chunkCounts() (chunks, tokens, behind, coalesced float64) {
	fams := ts.scrape()
	get := func(name string) float64 {
		v, ok := metricValue(fams, name)
		require.True(ts.t, ok, "no series %s", name)
		return v
	}
	return get("agentsim_stream_chunks_total"), get("agentsim_stream_chunk_tokens_total"),
		get("agentsim_stream_chunks_behind_total"), get("agentsim_stream_chunks_coalesced_total")
}

// chunkSettings scrapes the settings the chunk counters are judged against: the tokens a
// chunk carries and the most it carries when the writer has fallen behind.
func (ts *testServer) chunkSettings() (interval, coalesce float64) {
	fams := ts.scrape()
	get := func(name string) float64 {
		v, ok := metricValue(fams, name)
		require.True(ts.t, ok, "no series %s", name)
		return v
	}
	return get("agentsim_stream_interval_tokens"), get("agentsim_stream_coalesce_tokens")
}

// TestStreamInterval checks that every chunk carries the profile's stream_interval of tokens
// (the last one what is left), and that a client that keeps up sees no chunk behind.
func TestStreamInterval(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.StreamInterval = 4
		ts := startServer(t, simserver.Options{Profile: p})
		resp := ts.post(context.Background(), streamBody(`,"max_tokens":42,"ignore_eos":true`))
		defer resp.Body.Close()
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		r := decodeStream(t, frames, simserver.FieldReasoningContent)
		require.True(t, r.done)
		var sizes []int
		for _, c := range r.chunks[1 : len(r.chunks)-1] {
			sizes = append(sizes, simserver.CountTokens(c.Choices[0].Delta["content"]))
		}
		assert.Equal(t, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2}, sizes, "tokens per chunk")
		chunks, tokens, behind, coalesced := ts.chunkCounts()
		assert.Equal(t, []float64{11, 42, 0, 0}, []float64{chunks, tokens, behind, coalesced},
			"chunks, tokens, chunks behind, chunks coalesced")
		interval, coalesce := ts.chunkSettings()
		assert.Equal(t, []float64{4, 4}, []float64{interval, coalesce},
			"agentsim_stream_interval_tokens, agentsim_stream_coalesce_tokens: stream_interval, and no coalescing")
	})
}

// TestStreamBehind checks what happens when the writer cannot keep up (here: a client that
// reads nothing for 120 s, longer than the transport buffers take to fill): without coalescing the backlog goes out one token a chunk and the
// chunks written behind are counted; with stream_coalesce_tokens it is coalesced, and counted
// as such. Nothing is silent.
func TestStreamBehind(t *testing.T) {
	for _, tc := range []struct {
		name     string
		coalesce int
	}{{"strict", 0}, {"coalescing", 8}} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				p := engine.DSV4PD()
				p.StreamCoalesceTokens = tc.coalesce
				ts := startServer(t, simserver.Options{Profile: p})
				resp := ts.post(context.Background(), streamBody(`,"max_tokens":4000,"ignore_eos":true`))
				defer resp.Body.Close()
				ts.wait(120 * time.Second) // the client reads nothing: the server's writes block once the buffers are full
				frames, err := readFrames(ts.clk, resp.Body)
				require.NoError(t, err)
				r := decodeStream(t, frames, simserver.FieldReasoningContent)
				require.True(t, r.done)
				chunks, tokens, behind, coalesced := ts.chunkCounts()
				assert.Equal(t, 4000.0, tokens)
				assert.Positive(t, behind, "chunks written behind the engine are counted")
				if tc.coalesce == 0 {
					assert.Equal(t, 4000.0, chunks, "one token a chunk, backlog included")
					assert.Zero(t, coalesced)
				} else {
					assert.Less(t, chunks, 4000.0, "the backlog is coalesced")
					assert.Positive(t, coalesced, "coalesced chunks are counted")
					_, limit := ts.chunkSettings()
					assert.Equal(t, float64(tc.coalesce), limit, "agentsim_stream_coalesce_tokens is the profile's stream_coalesce_tokens")
				}
			})
		})
	}
}

// TestChunkLargerThanTheWindow: a profile whose chunks outgrow the in-process transport's
// window (a 60,000-token stream interval) still streams to its end: the chunks after the first
// are written on the client's goroutine, which must not wait for itself to read them.
func TestChunkLargerThanTheWindow(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.StreamInterval = 60000
		ts := startServer(t, simserver.Options{Profile: p})
		resp := ts.post(t.Context(), streamBody(`,"max_tokens":120000,"ignore_eos":true,"reasoning_effort":"none"`))
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, 2, strings.Count(string(body), `"content":"`)-1, "two chunks of 60,000 tokens after the role chunk")
		assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"))
	})
}
