package replay_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/internal/replay"
	"github.com/agentsim/agentsim/internal/traceimport"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// TestToolSetOfSize: the coding set is sent for a size within 10 % of its own, generated
// definitions of the size otherwise, each a set the workloads accept and the same for the
// same size.
func TestToolSetOfSize(t *testing.T) {
	coding, _ := workloads.BuiltinToolSet(workloads.ToolSetCoding)
	for _, tokens := range []int{50, 300, 1000, 4000, 5225, 5600, 12000} {
		set := replay.ToolSetOfSize(tokens)
		got := (len(set.JSON()) + 3) / 4
		assert.InDelta(t, tokens, got, 0.1*float64(tokens)+1, "ToolSetOfSize(%d) is %d tokens", tokens, got)
		assert.Equal(t, set.JSON(), replay.ToolSetOfSize(tokens).JSON(), "ToolSetOfSize(%d) depends on the size alone", tokens)
		_, err := workloads.ParseToolSet("again", set.JSON())
		assert.NoError(t, err, "ToolSetOfSize(%d)", tokens)
	}
	assert.Same(t, coding, replay.ToolSetOfSize(5225))
	assert.NotSame(t, coding, replay.ToolSetOfSize(12000))
}

// sentBody is what a recording transport keeps of one request body.
type sentBody struct {
	ToolsBytes int
	ToolChoice any
	Messages   []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	}
}

// recorder is a transport that keeps the body of every request it carries.
type recorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	bodies []sentBody
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return r.next.RoundTrip(req)
	}
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(raw))
	var b struct {
		Tools      json.RawMessage `json:"tools"`
		ToolChoice any             `json:"tool_choice"`
		sentBody
	}
	if json.Unmarshal(raw, &b) == nil {
		var compact bytes.Buffer
		if len(b.Tools) > 0 && json.Compact(&compact, b.Tools) == nil {
			b.ToolsBytes = compact.Len()
		}
		b.sentBody.ToolChoice = b.ToolChoice
		r.mu.Lock()
		r.bodies = append(r.bodies, b.sentBody)
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

// codingTrace records a small coding-agent run (18 requests) and imports it as a trace, which
// fills the tool fields; steps counts its replies with tool calls.
func codingTrace(t *testing.T) (*traceimport.Trace, int) {
	t.Helper()
	orig := harnesstest.Run(t, harnesstest.Config{Workload: "coding-agent", Set: map[string]string{
		"agents": "3", "rounds": "6", "context.initial_tokens": "2000", "tools.latency": "2s", "think_time": "0s", "start_jitter": "0s"}})
	require.Equal(t, 18, orig.Results.Requests.OK)
	tr, err := traceimport.Run(orig.Dir)
	require.NoError(t, err)
	steps := 0 // replies with tool calls
	for _, r := range tr.Requests {
		require.Positive(t, r.ToolsTokens)
		if r.ToolCalls > 0 {
			steps++
		}
	}
	require.Positive(t, steps, "the recorded run made tool calls")
	return tr, steps
}

// checkToolMessages checks that every request carries definitions of about the recorded
// size, tools_tokens (4 bytes of compact JSON a token), and answers only calls its own history
// has.
func checkToolMessages(t *testing.T, toolsTokens int, bodies []sentBody) {
	t.Helper()
	want := toolsTokens * 4
	for i, b := range bodies {
		assert.InDelta(t, want, b.ToolsBytes, 0.1*float64(want), "request %d carries %d bytes of tools", i, b.ToolsBytes)
		var ids []string
		for _, m := range b.Messages {
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID)
			}
			if m.Role == "tool" {
				assert.Contains(t, ids, m.ToolCallID, "request %d answers a call it has", i)
			}
		}
	}
}

// TestReplayToolStructure records a small coding-agent run, imports it as a trace (which
// fills the tool fields) and replays it: every request succeeds, carries tool definitions of
// the recorded size, answers the live model's calls by their ids, waits the recorded tool
// time in the tool state, and has the recorded token counts.
func TestReplayToolStructure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, steps := codingTrace(t)
		p := planOf(t, tr, replay.Options{})
		rec := &recorder{}
		w := load(t, "smoke", "agents", "3", "duration", "0s", "pacer.kind", "unlimited", "request.reasoning_effort", "low") // the recorded coding-agent's effort
		res := harnesstest.Run(t, harnesstest.Config{Spec: w, Scripts: p.Scripts,
			Transport: func(next http.RoundTripper) http.RoundTripper { rec.next = next; return rec }})
		assert.Equal(t, 18, res.Results.Requests.OK, "no request refused: %+v", res.Results.Requests)

		require.Len(t, rec.bodies, 18)
		checkToolMessages(t, tr.Requests[0].ToolsTokens, rec.bodies)
		live, results := 0, 0
		for _, e := range res.Events {
			switch e.Kind {
			case events.ToolCall:
				assert.True(t, strings.HasPrefix(e.ToolCallID, "call_"), "%+v", e)
				if !strings.HasPrefix(e.ToolCallID, "call_replay_") {
					live++
				}
			case events.ToolResult:
				results++
				assert.InDelta(t, 2, e.LatencyS, 0.01, "the recorded tool time: %+v", e)
			}
		}
		// Each reply the trace says called tools did (tool_choice required), with as many calls
		// as the live model chose.
		assert.GreaterOrEqual(t, results, steps)
		assert.Equal(t, results, live, "the calls run and answered are the live model's")
		inTools := 0
		for _, smp := range res.Samples {
			inTools = max(inTools, smp.Agents[events.StateTool])
		}
		assert.Positive(t, inTools, "agents waiting out the tool time are in the tool state")

		cmp, err := replay.Compare(res.Dir, p)
		require.NoError(t, err)
		assert.Equal(t, 18, cmp.Compared)
		assert.Equal(t, 18, cmp.SameTokens, "every request has the recorded token counts: %+v", cmp.PromptDiff)
		assert.InDelta(t, 1, cmp.E2ERatio.P50, 0.1, "e2e ratio %+v", cmp.E2ERatio)
	})
}

// TestReplayToolStructureOpenLoop replays the coding-agent trace in timestamps mode: each
// request at its time, with the same structure — definitions of the recorded size, and tool
// messages answering the calls of the stand-in for a reply not back yet — and none refused.
func TestReplayToolStructureOpenLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, _ := codingTrace(t)
		p := planOf(t, tr, replay.Options{Mode: replay.Timestamps})
		rec := &recorder{}
		w := load(t, "smoke", "agents", "3", "duration", "0s", "pacer.kind", "unlimited", "request.reasoning_effort", "low") // the recorded coding-agent's effort
		res := harnesstest.Run(t, harnesstest.Config{Spec: w, Scripts: p.Scripts,
			Transport: func(next http.RoundTripper) http.RoundTripper { rec.next = next; return rec }})
		assert.Equal(t, 18, res.Results.Requests.OK, "no request refused: %+v", res.Results.Requests)
		require.Len(t, rec.bodies, 18)
		checkToolMessages(t, tr.Requests[0].ToolsTokens, rec.bodies)
		tools := 0
		for _, b := range rec.bodies {
			for _, m := range b.Messages {
				if m.Role == "tool" {
					tools++
				}
			}
		}
		assert.Positive(t, tools, "the requests carry tool messages")
	})
}

// TestReplayOwnToolCalls replays a trace whose replies called tools but whose requests
// offered none it knows of (no tools_tokens): the live model calls nothing, so the agent
// answers calls of its own, named as recorded, with ids made up, and each request still has
// its recorded prompt.
func TestReplayOwnToolCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &traceimport.Trace{Header: trace.Header{Source: "test", Created: "2026-11-30T00:00:00Z"}}
		zero, one := 0, 1
		tr.Requests = []trace.Request{
			{Session: "s", Seq: 0, PromptTokens: 600, OutputTokens: 40, Status: 200, E2ES: 1, ToolCalls: 2, ToolNames: []string{"read", "grep"}, ToolS: floatp(1.5)},
			{Session: "s", Seq: 1, TS: 3, AfterS: 2, PromptTokens: 1000, OutputTokens: 20, Extends: &zero, NewTokens: 360, Status: 200, E2ES: 1, ToolCalls: 1, ToolS: floatp(0.5)},
			{Session: "s", Seq: 2, TS: 5, AfterS: 1, PromptTokens: 1400, OutputTokens: 30, Extends: &one, NewTokens: 380, Status: 200, E2ES: 1},
		}
		p := planOf(t, tr, replay.Options{})
		rec := &recorder{}
		w := load(t, "smoke", "agents", "1", "duration", "0s", "pacer.kind", "unlimited", "request.reasoning_effort", "none")
		res := harnesstest.Run(t, harnesstest.Config{Spec: w, Scripts: p.Scripts,
			Transport: func(next http.RoundTripper) http.RoundTripper { rec.next = next; return rec }})
		assert.Equal(t, 3, res.Results.Requests.OK, "%+v", res.Results.Requests)
		var calls []string
		for _, e := range res.Events {
			if e.Kind == events.ToolCall {
				calls = append(calls, e.Tool+" "+e.ToolCallID)
			}
		}
		assert.Equal(t, []string{"read call_replay_0_0", "grep call_replay_0_1", "tool call_replay_1_0"}, calls)
		require.Len(t, rec.bodies, 3)
		checkToolMessages(t, 0, rec.bodies)
		var roles []string
		for _, m := range rec.bodies[2].Messages {
			roles = append(roles, m.Role)
		}
		assert.Equal(t, []string{"user", "assistant", "tool", "tool", "assistant", "tool"}, roles)
		cmp, err := replay.Compare(res.Dir, p)
		require.NoError(t, err)
		assert.Equal(t, 3, cmp.SameTokens, "%+v", cmp.PromptDiff)
	})
}

func floatp(f float64) *float64 { return &f }
