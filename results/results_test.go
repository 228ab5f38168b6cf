package results

import (
	"testing"

	"github.com/agentsim/agentsim/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarizeNearestRank(t *testing.T) {
	xs := make([]float64, 0, 100)
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	s := Summarize(xs)
	assert.Equal(t, Summary{N: 100, Mean: 50.5, P50: 50, P90: 90, P99: 99, Min: 1, Max: 100}, s)
	assert.Equal(t, Summary{}, Summarize(nil))
	assert.Equal(t, Summary{N: 1, Mean: 3, P50: 3, P90: 3, P99: 3, Min: 3, Max: 3}, Summarize([]float64{3}))
}

func TestBuilderCountsMatchEvents(t *testing.T) {
	b := NewBuilder()
	for _, e := range []events.Event{
		{Kind: events.RequestSent, Request: "a1"},
		{Kind: events.Done, Request: "a1", LatencyS: 10, TTFTS: 2, CompletionTokens: 801, ReasoningTokens: 600, PromptTokens: 1000, ITLS: 0.01},
		{Kind: events.RoundDone, Outcome: events.RoundOK},
		{Kind: events.RequestSent, Request: "a2"},
		{Kind: events.Error, Request: "a2", Class: "http_status", Status: 503},
		{Kind: events.Retry, Request: "a2"},
		{Kind: events.RequestSent, Request: "a3", Attempt: 1},
		{Kind: events.Timeout, Request: "a3", Attempt: 1, Class: "timeout_idle", MaxGapS: 130},
		{Kind: events.RoundDone, Outcome: events.RoundFailed},
		{Kind: events.RequestSent, Request: "a4"},
	} {
		b.Event(e)
	}
	b.Sample(events.Sample{Server: map[string]float64{"decode_running": 4}})
	b.Sample(events.Sample{Server: map[string]float64{"decode_running": 8}})
	var r Results
	b.Fill(&r, 10)
	// Two attempts failed, but the 503 was retried: one request failed in the end.
	assert.Equal(t, Requests{Sent: 4, OK: 1, Errors: 1, Timeouts: 1, InFlight: 1, Retries: 1,
		Failed: 1, RetryReasons: map[string]int{"http_status 503": 1}}, r.Requests)
	assert.Equal(t, 1, r.Rounds.Completed)
	assert.Equal(t, 1, r.Rounds.Failed)
	assert.InDelta(t, 0.01, r.Latency.TPOT.Mean, 1e-12, "(10 s − 2 s) / 800 tokens")
	assert.Equal(t, Tokens{Prompt: 1000, Reasoning: 600, Content: 201, OutputPerSecond: 80.1}, r.Tokens)
	assert.Equal(t, MeanMax{Mean: 6, Max: 8, N: 2}, r.Server.DecodeRunning)
	require.Equal(t, map[string]int{"a4": 0}, b.open, "requests sent without a terminal event")
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	r := &Results{Command: "run", Verdict: Verdict{Kind: "healthy"}, Interrupted: true}
	require.NoError(t, Write(dir, r))
	got, err := Read(dir)
	require.NoError(t, err)
	assert.Equal(t, Schema, got.Schema)
	assert.True(t, got.Interrupted)
}

// Count outcomes, not attempts: a request that got a 429 and then succeeded on its retry is
// a success with a retry, not a failure.
func TestBuilderCountsOutcomes(t *testing.T) {
	b := NewBuilder()
	for _, e := range []events.Event{
		{Agent: 0, Kind: events.RequestSent, Request: "a0-r1-0"},
		{Agent: 0, Kind: events.Error, Request: "a0-r1-0", Class: "http_status", Status: 429},
		{Agent: 0, Kind: events.Retry, Request: "a0-r1-0", Attempt: 1},
		{Agent: 1, Kind: events.RequestSent, Request: "a1-r1-0"},
		{Agent: 1, Kind: events.Error, Request: "a1-r1-0", Class: "error_frame"},
		{Agent: 1, Kind: events.RoundDone, Outcome: events.RoundFailed},
		{Agent: 0, Kind: events.RequestSent, Request: "a0-r1-1", Attempt: 1},
		{Agent: 0, Kind: events.Done, Request: "a0-r1-1", Attempt: 1, LatencyS: 5, CompletionTokens: 10},
		{Agent: 0, Kind: events.RoundDone, Outcome: events.RoundOK},
		{Agent: 1, Kind: events.RequestSent, Request: "a1-r2-0"},
	} {
		b.Event(e)
	}
	var r Results
	b.Fill(&r, 10)
	q := r.Requests
	assert.Equal(t, 2, q.Errors, "attempts that failed")
	assert.Equal(t, 1, q.Failed, "requests that failed in the end: agent 1's, not retried")
	assert.Equal(t, 1, q.RetriedOK)
	assert.Equal(t, map[string]int{"http_status 429": 1}, q.RetryReasons)
}

// tokens.output_per_second counts the tokens streamed, not only those of finished requests:
// a request cancelled mid-stream and one still open count by their chunks, at the tokens per
// chunk the finished ones showed; the observations the gate resamples are its terms.
func TestOutputRateCountsStreamedTokens(t *testing.T) {
	b := NewBuilder()
	for _, e := range []events.Event{
		{Kind: events.RequestSent, Request: "a1"},
		{Kind: events.Done, Request: "a1", CompletionTokens: 400, ReasoningTokens: 300, Chunks: 200},
		{Kind: events.RequestSent, Request: "a2"},
		{Kind: events.Cancelled, Request: "a2", Chunks: 50},
		{Kind: events.RequestSent, Request: "a3"},
		{Kind: events.RequestSent, Request: "a4"},
	} {
		b.Event(e)
	}
	b.Sample(events.Sample{InFlight: 2, Streams: []events.Stream{{Request: "a3", Chunks: 25}, {Request: "a9", Chunks: 7}}})
	var r Results
	b.Fill(&r, 10)
	// 400 + (50 + 25 chunks) × 2 tokens per chunk = 550 tokens in 10 s; a9 is not a request
	// the events know, a4 has no chunk yet.
	assert.InDelta(t, 55.0, r.Tokens.OutputPerSecond, 1e-9)
	assert.Equal(t, int64(400), r.Tokens.Reasoning+r.Tokens.Content, "usage stays the finished requests'")
	assert.Equal(t, []float64{400, 100, 50}, b.Observations().Output)
}
