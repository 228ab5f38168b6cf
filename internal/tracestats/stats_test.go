package tracestats

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
)

func intp(i int) *int { return &i }

// TestSummary: two sessions, one of three requests growing its context, one of one; three
// requests with outcomes overlap.
func TestSummary(t *testing.T) {
	a := New(trace.Header{Source: "test"})
	for _, r := range []trace.Request{
		{Session: "a", Seq: 0, TS: 0, PromptTokens: 1000, OutputTokens: 100, E2ES: 10, Status: 200, HashIDs: []uint64{1, 2}},
		{Session: "b", Seq: 0, TS: 5, PromptTokens: 800, OutputTokens: 50, CachedTokens: 400, E2ES: 10, Status: 200, HashIDs: []uint64{1, 3}},
		{Session: "a", Seq: 1, TS: 12, AfterS: 2, PromptTokens: 1500, OutputTokens: 80, Extends: intp(0), NewTokens: 400, E2ES: 4, Status: 500, HashIDs: []uint64{1, 2, 4}},
		{Session: "a", Seq: 2, TS: 20, AfterS: 4, PromptTokens: 1900, OutputTokens: 60, Extends: intp(1), NewTokens: 320},
	} {
		a.Add(r)
	}
	s := a.Summary()
	assert.Equal(t, 4, s.Requests)
	assert.Equal(t, 2, s.Sessions)
	assert.Equal(t, 20.0, s.DurationS) // first send 0, last end 20 (the last request has no e2e_s)
	assert.Equal(t, Dist{N: 2, P50: 1, P90: 3, Max: 3}, s.RequestsPerSession)
	assert.Equal(t, Dist{N: 1, P50: 900, P90: 900, Max: 900}, s.ContextGrowth.GrowthTokens)
	assert.Equal(t, Dist{N: 2, P50: 2, P90: 4, Max: 4}, s.ThinkTimeS)
	assert.Equal(t, "end", s.AfterSFrom)
	// [0,10] [5,15] [12,16]: 2 in flight from 5 to 10 and from 12 to 15; mean over 16 s
	require.NotNil(t, s.Concurrency)
	assert.Equal(t, 2, s.Concurrency.Max)
	assert.InDelta(t, (10+10+4)/16.0, s.Concurrency.Mean, 1e-9)
	assert.Equal(t, "1 request without an e2e_s is not counted", s.ConcurrencyNote)
	assert.Equal(t, 2, s.PrefixReuse.ExtendingRequests)
	assert.InDelta(t, (1100+1580)/5200.0, s.PrefixReuse.ConversationTokensFraction, 1e-9)
	assert.InDelta(t, 400/5200.0, s.PrefixReuse.CachedTokensFraction, 1e-9)
	assert.Equal(t, 7, s.PrefixReuse.HashBlocks)
	assert.InDelta(t, 3/7.0, s.PrefixReuse.SeenBeforeFraction, 1e-9) // 1 (twice) and 2 seen before
	assert.Equal(t, map[string]int{"200": 2, "500": 1, "unknown": 1}, s.Status)

	var buf bytes.Buffer
	require.NoError(t, RenderJSON(&buf, s))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	assert.Equal(t, 4.0, m["requests"]) // top level, as the command line promises
	buf.Reset()
	require.NoError(t, Render(&buf, s))
	assert.Contains(t, buf.String(), "requests: 4   sessions: 2   duration: 20.0 s (first send to last end)\n")
	assert.Contains(t, buf.String(), "think time (after_s, from the previous request's end): p50 2.0 s  p90 4.0 s  max 4.0 s\n")
	assert.Contains(t, buf.String(), "concurrency (requests in flight): mean 1.5  max 2 (1 request without an e2e_s is not counted)\n")
}

// TestSummaryEmpty: a trace with a header and no requests summarises to zeros, not a panic.
func TestSummaryEmpty(t *testing.T) {
	s := New(trace.Header{Source: "empty"}).Summary()
	assert.Equal(t, 0, s.Requests)
	assert.Nil(t, s.Concurrency)
	var buf bytes.Buffer
	require.NoError(t, Render(&buf, s))
}

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestRenderGolden compares the text and JSON renderings of a small trace with their golden
// files; go test -update rewrites them.
func TestRenderGolden(t *testing.T) {
	a := New(trace.Header{Source: "record:http://127.0.0.1:30000", Created: "2026-11-30T19:44:13Z"})
	for _, r := range []trace.Request{
		{Session: "a", Seq: 0, TS: 0, PromptTokens: 6000, OutputTokens: 900, ReasoningTokens: 700, E2ES: 21.5, TTFTS: 2, Status: 200},
		{Session: "b", Seq: 0, TS: 1, PromptTokens: 5800, CachedTokens: 4096, OutputTokens: 650, ReasoningTokens: 500, E2ES: 18, Status: 200},
		{Session: "a", Seq: 1, TS: 25.5, AfterS: 4, PromptTokens: 7400, CachedTokens: 6144, OutputTokens: 400, Extends: intp(0), NewTokens: 500, E2ES: 9.25, Status: 200},
		{Session: "b", Seq: 1, TS: 22, AfterS: 3, PromptTokens: 6900, OutputTokens: 0, Extends: intp(0), NewTokens: 450, Status: 429},
	} {
		a.Add(r)
	}
	for _, c := range []struct {
		file   string
		render func(*bytes.Buffer, Summary) error
	}{
		{"testdata/summary.golden", func(b *bytes.Buffer, s Summary) error { return Render(b, s) }},
		{"testdata/summary.json.golden", func(b *bytes.Buffer, s Summary) error { return RenderJSON(b, s) }},
	} {
		var buf bytes.Buffer
		require.NoError(t, c.render(&buf, a.Summary()))
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(c.file, buf.Bytes(), 0o644))
		}
		want, err := os.ReadFile(c.file)
		require.NoError(t, err)
		assert.Equal(t, string(want), buf.String(), c.file)
	}
}

func floatp(f float64) *float64 { return &f }

// TestSummaryTools: session a runs two tasks (three steps, then two), session b stops while
// its tool runs; calls per step count the replies with calls, tool time the replies whose
// results came back.
func TestSummaryTools(t *testing.T) {
	a := New(trace.Header{Source: "test"})
	for _, r := range []trace.Request{
		{Session: "a", Seq: 0, TS: 0, PromptTokens: 6000, E2ES: 1, ToolsTokens: 5300, ToolCalls: 2, ToolNames: []string{"read", "grep"}, ToolS: floatp(0.75)},
		{Session: "b", Seq: 0, TS: 0.5, PromptTokens: 6000, E2ES: 1, ToolsTokens: 5300, ToolCalls: 1, ToolNames: []string{"grep"}, ToolS: floatp(4)},
		{Session: "a", Seq: 1, TS: 1.75, AfterS: 0.75, PromptTokens: 6900, E2ES: 1, ToolsTokens: 5300, ToolCalls: 1, ToolNames: []string{"read"}, ToolS: floatp(0.25)},
		{Session: "a", Seq: 2, TS: 3, AfterS: 0.25, PromptTokens: 7400, E2ES: 2, ToolsTokens: 5300},
		{Session: "a", Seq: 3, TS: 10, AfterS: 5, PromptTokens: 8400, E2ES: 1, ToolsTokens: 5300, ToolCalls: 3},
		{Session: "a", Seq: 4, TS: 12, AfterS: 1, PromptTokens: 8900, E2ES: 1, ToolsTokens: 5300},
	} {
		a.Add(r)
	}
	s := a.Summary()
	require.NotNil(t, s.Tools)
	tl := s.Tools
	assert.Equal(t, 6, tl.OfferingRequests)
	assert.Equal(t, 7, tl.Calls)
	assert.Equal(t, 4, tl.CallingReplies)
	assert.Equal(t, map[string]int{"read": 2, "grep": 2, "": 3}, tl.ByName)
	assert.Equal(t, Dist{N: 4, P50: 1, P90: 3, Max: 3}, tl.CallsPerStep)
	assert.InDelta(t, 7/4.0, tl.CallsPerStepMean, 1e-9)
	assert.Equal(t, TimeDist{N: 3, P50: 0.75, P99: 4, TotalS: 5}, tl.ToolTimeS)
	// a: 0–2 is one task (3 steps); 3 called tools but 4 brought no results: 3 and 4 are
	// tasks of one step each. b ended mid-task.
	assert.Equal(t, Dist{N: 3, P50: 1, P90: 3, Max: 3}, tl.StepsPerTask)
	assert.InDelta(t, 5/3.0, tl.StepsPerTaskMean, 1e-9)
	assert.Equal(t, 1, tl.OpenTasks)

	var buf bytes.Buffer
	require.NoError(t, Render(&buf, s))
	out := buf.String()
	assert.Contains(t, out, "tools: 6 of 6 requests offered tools (definitions p50 5300 / p90 5300 / max 5300 tokens); 4 replies made 7 tool calls (unnamed ×3, grep ×2, read ×2)\n")
	assert.Contains(t, out, "tool calls per step (replies with calls): mean 1.75; p50 1 / p90 3 / max 3\n")
	assert.Contains(t, out, "tool time (tool_s, from a reply's end to the request with its results): p50 0.75 s  p99 4.0 s  total 5.0 s over 3 steps\n")
	assert.Contains(t, out, "steps per task (requests from a user message to a reply without tool calls): mean 1.7; p50 1 / p90 3 / max 3 over 3 tasks (1 more unfinished when their session ended)\n")

	none := New(trace.Header{Source: "test"})
	none.Add(trace.Request{Session: "a", PromptTokens: 10})
	assert.Nil(t, none.Summary().Tools, "a trace without tools has no tools summary")
}
