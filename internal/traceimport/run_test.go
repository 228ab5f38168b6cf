package traceimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// runEvents is a run of two agents: agent 0's second round fails with a 503 and is retried,
// agent 1 sends one request.
const runEvents = `{"t_s":0,"event":"run_start","agent":-1,"round":0}
{"t_s":0.1,"event":"read_done","agent":0,"round":1,"read_tokens":300,"context_tokens":1000}
{"t_s":0.1,"event":"request_sent","agent":0,"round":1,"request":"a0-r1-0","context_tokens":1000,"max_tokens":100}
{"t_s":0.2,"event":"read_done","agent":1,"round":1,"read_tokens":200,"context_tokens":900}
{"t_s":0.2,"event":"request_sent","agent":1,"round":1,"request":"a1-r1-0","context_tokens":900,"max_tokens":80}
{"t_s":2.1,"event":"done","agent":0,"round":1,"request":"a0-r1-0","latency_s":2,"ttft_s":0.5,"prompt_tokens":1010,"completion_tokens":100,"reasoning_tokens":40,"cached_tokens":0,"finish_reason":"length"}
{"t_s":3.2,"event":"done","agent":1,"round":1,"request":"a1-r1-0","latency_s":3,"ttft_s":0.6,"prompt_tokens":905,"completion_tokens":80,"finish_reason":"length"}
{"t_s":4.1,"event":"read_done","agent":0,"round":2,"read_tokens":400,"context_tokens":1480}
{"t_s":4.1,"event":"request_sent","agent":0,"round":2,"request":"a0-r2-0","context_tokens":1480,"max_tokens":90}
{"t_s":4.3,"event":"error","agent":0,"round":2,"request":"a0-r2-0","latency_s":0.2,"status":503,"class":"http_status","message":"overloaded"}
{"t_s":5.3,"event":"request_sent","agent":0,"round":2,"request":"a0-r2-1","attempt":1,"context_tokens":1480,"max_tokens":90}
{"t_s":8.3,"event":"done","agent":0,"round":2,"request":"a0-r2-1","attempt":1,"latency_s":3,"ttft_s":0.4,"prompt_tokens":1482,"completion_tokens":90,"cached_tokens":1010,"finish_reason":"length"}
{"t_s":8.4,"event":"run_end","agent":-1,"round":0}
`

// TestRun imports a run directory: one session per agent, sends in order, after_s from the
// previous end, usage from done events, a failed attempt's prompt estimated, extends
// pointing at the agent's previous completed request, and the API the run's requests went
// through (request.api) on every line.
func TestRun(t *testing.T) {
	for _, api := range workloads.APIs {
		t.Run(api, func(t *testing.T) { testRun(t, api) })
	}
}

func testRun(t *testing.T, api string) {
	dir := t.TempDir()
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke", Overrides: []workloads.Override{{Key: "request.api", Value: api, Source: "--set"}}})
	require.NoError(t, err)
	cfg, err := w.Recorded(map[string]string{"server": "http://127.0.0.1:1"}, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), cfg, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(runEvents), 0o644))

	tr, err := Run(dir)
	require.NoError(t, err)
	require.Len(t, tr.Requests, 4)
	assert.Equal(t, 2, tr.Header.Sessions)
	zero := 0
	want := []trace.Request{
		{Session: "agent-0", Seq: 0, TS: 0.1, PromptTokens: 1010, OutputTokens: 100, ReasoningTokens: 40, MaxTokens: 100,
			Status: 200, TTFTS: 0.5, E2ES: 2, FinishReason: "length"},
		{Session: "agent-1", Seq: 0, TS: 0.2, PromptTokens: 905, OutputTokens: 80, MaxTokens: 80,
			Status: 200, TTFTS: 0.6, E2ES: 3, FinishReason: "length"},
		{Session: "agent-0", Seq: 1, TS: 4.1, AfterS: 2, PromptTokens: 1480, TokensEstimated: true, MaxTokens: 90,
			Status: 503, E2ES: 0.2, Extends: &zero, NewTokens: 400},
		{Session: "agent-0", Seq: 2, TS: 5.3, AfterS: 1, PromptTokens: 1482, CachedTokens: 1010, OutputTokens: 90, MaxTokens: 90,
			Status: 200, TTFTS: 0.4, E2ES: 3, FinishReason: "length", Extends: &zero, NewTokens: 1482 - 1010 - 60},
	}
	for i := range want {
		want[i].Model, want[i].ReasoningEffort, want[i].API = w.Model, w.Request.ReasoningEffort, api
		got := tr.Requests[i]
		assert.InDelta(t, want[i].AfterS, got.AfterS, 1e-9, "request %d after_s", i)
		got.AfterS = want[i].AfterS
		assert.Equal(t, want[i], got, "request %d", i)
	}
	var b strings.Builder
	require.NoError(t, tr.Write(&b), "the imported trace passes the writer's checks")
}

// TestRunNotARunDirectory names the missing file.
func TestRunNotARunDirectory(t *testing.T) {
	_, err := Run(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "events.jsonl")
}

// TestRunToolFields: a reply's tool_call and tool_result events become its tool fields —
// the calls in order, their names, the tool time from the request's end to the last result —
// and a planned call (the agent's own, after a reply without calls) is not the reply's.
func TestRunToolFields(t *testing.T) {
	done := func(ts float64) *events.Event { return &events.Event{Kind: events.Done, TS: ts} }
	reqs := map[string]*runRequest{
		"a0-r1-0": {end: done(2)},
		"a0-r2-0": {end: done(5)},
		"a0-r3-0": {end: done(9)},
	}
	toolEvent(reqs, events.ToolCall, "a0-r1-0", "call_1", "read", 2, false)
	toolEvent(reqs, events.ToolCall, "a0-r1-0", "call_2", "grep", 2, false)
	toolEvent(reqs, events.ToolResult, "a0-r1-0", "call_2", "grep", 2.5, false)
	toolEvent(reqs, events.ToolResult, "a0-r1-0", "call_1", "read", 3.25, false)
	toolEvent(reqs, events.ToolCall, "a0-r2-0", "", "read", 5, true)
	toolEvent(reqs, events.ToolResult, "a0-r2-0", "", "read", 6, true)
	toolEvent(reqs, events.ToolCall, "a0-r3-0", "call_3", "read", 9, false) // the run stopped mid-tool
	toolEvent(reqs, events.ToolCall, "a9-r1-0", "call_4", "read", 9, false) // no such request

	var got [3]trace.Request
	for i, id := range []string{"a0-r1-0", "a0-r2-0", "a0-r3-0"} {
		reqs[id].fillTools(&got[i], 120)
	}
	toolS := 1.25
	assert.Equal(t, trace.Request{ToolsTokens: 120, ToolCalls: 2, ToolNames: []string{"read", "grep"}, ToolS: &toolS}, got[0])
	assert.Equal(t, trace.Request{ToolsTokens: 120}, got[1], "planned calls are not the reply's")
	assert.Equal(t, trace.Request{ToolsTokens: 120, ToolCalls: 1, ToolNames: []string{"read"}}, got[2], "no tool time without every result")
}

// TestRunToolsTokens: the definitions' size comes from the run's tool set.
func TestRunToolsTokens(t *testing.T) {
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	n, note := runToolsTokens(w)
	assert.Zero(t, n, "a workload without tools")
	assert.Empty(t, note)
	w.Tools.Set = workloads.ToolSetCoding
	set, err := w.Tools.Definitions()
	require.NoError(t, err)
	n, _ = runToolsTokens(w)
	assert.Equal(t, (len(set.JSON())+3)/4, n)
	assert.Greater(t, n, 4000, "the coding set is about 21 k characters")
}

// TestRunOfAToolLoop imports a coding-agent run on the simulator, whose model calls tools: the
// requests whose replies called tools carry their count, names and tool time, and the trace
// passes the writer's checks.
func TestRunOfAToolLoop(t *testing.T) {
	// Twelve model calls: the simulated model's first user request may take no tool step
	// (TraceLab's median is two model calls a request), and the trace must hold replies that did.
	res := harnesstest.Run(t, harnesstest.Config{Workload: "coding-agent", Set: map[string]string{"agents": "1", "rounds": "12"}})
	require.Positive(t, res.Results.Tools.Calls, "the run called tools")
	tr, err := Run(res.Dir)
	require.NoError(t, err)
	calls, timed := 0, 0
	for _, r := range tr.Requests {
		assert.Positive(t, r.ToolsTokens, "request %d offers the coding tools", r.Seq)
		require.Len(t, r.ToolNames, r.ToolCalls, "request %d", r.Seq)
		calls += r.ToolCalls
		if r.ToolS != nil {
			timed++
			assert.GreaterOrEqual(t, *r.ToolS, 0.0)
		}
	}
	assert.Equal(t, res.Results.Tools.Calls-res.Results.Tools.PlannedCalls, calls, "every call of a reply is in the trace")
	assert.Positive(t, timed, "a reply's tool time is known once its results were sent")
	var b strings.Builder
	require.NoError(t, tr.Write(&b), "the imported trace passes the writer's checks")
}
