package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/internal/tracefit"
	"github.com/agentsim/agentsim/internal/tracestats"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// recordTools are the definitions the tool conversations offer: two tools the simulated
// model calls, and one that runs commands, which it never calls unasked.
const recordTools = `[
  {"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object",
    "properties":{"filePath":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":2000}},"required":["filePath"]}}},
  {"type":"function","function":{"name":"grep","parameters":{"type":"object","properties":{"pattern":{"type":"string","minLength":1},
    "path":{"type":"string"}},"required":["pattern"]}}},
  {"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}
]`

// toolLoop is one conversation with tools, driven through the proxy as a harness drives it.
type toolLoop struct {
	t     *testing.T
	c     *openai.Client
	tools []openai.Tool
	msgs  []openai.ChatCompletionMessage
}

func newToolLoop(t *testing.T, c *openai.Client, task string) *toolLoop {
	var tools []openai.Tool
	require.NoError(t, json.Unmarshal([]byte(recordTools), &tools))
	return &toolLoop{t: t, c: c, tools: tools, msgs: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "you are a coding agent"},
		{Role: openai.ChatMessageRoleUser, Content: task},
	}}
}

// ask sends the conversation with the tools and tool_choice choice, streamed or not, appends
// the reply, and returns its tool calls.
func (l *toolLoop) ask(choice string, stream bool) []openai.ToolCall {
	l.t.Helper()
	req := openai.ChatCompletionRequest{Model: "deepseek-v4-flash", Messages: l.msgs, Tools: l.tools, ToolChoice: choice,
		MaxTokens: 400, StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	var msg openai.ChatCompletionMessage
	if stream {
		msg = streamMessage(l.t, l.c, req)
	} else {
		req.StreamOptions = nil
		resp, err := l.c.CreateChatCompletion(context.Background(), req)
		require.NoError(l.t, err)
		msg = resp.Choices[0].Message
	}
	l.msgs = append(l.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: msg.Content, ToolCalls: msg.ToolCalls})
	return msg.ToolCalls
}

// answer runs the calls for d and appends one result per call.
func (l *toolLoop) answer(calls []openai.ToolCall, d time.Duration) {
	time.Sleep(d)
	for _, c := range calls {
		l.msgs = append(l.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: c.ID, Content: "no match"})
	}
}

// streamMessage streams req and puts the reply's message together as a harness does.
func streamMessage(t *testing.T, c *openai.Client, req openai.ChatCompletionRequest) openai.ChatCompletionMessage {
	t.Helper()
	req.Stream = true
	st, err := c.CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer st.Close()
	var m openai.ChatCompletionMessage
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return m
		}
		require.NoError(t, err)
		if len(resp.Choices) == 0 {
			continue
		}
		d := resp.Choices[0].Delta
		m.Content += d.Content
		for _, tc := range d.ToolCalls {
			require.NotNil(t, tc.Index)
			if *tc.Index == len(m.ToolCalls) {
				m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: tc.ID, Type: tc.Type, Function: openai.FunctionCall{Name: tc.Function.Name}})
			}
			m.ToolCalls[*tc.Index].Function.Arguments += tc.Function.Arguments
		}
	}
}

func names(calls []openai.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Function.Name)
	}
	return out
}

// TestRecordToolConversation records a tool loop against the simulator, streamed and not:
// each row counts and names its reply's calls and the definitions' size, and a reply's tool
// time is the gap until the request that carries its results — absent when the next request
// brings none, or when none follows. A row whose tool time is not known yet is held.
func TestRecordToolConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr := startProxy(t, newSim(t), record.Options{})
		c := pr.openai()
		l := newToolLoop(t, c, "find the bug")
		var compact []byte
		compact, err := json.Marshal(l.tools)
		require.NoError(t, err)
		toolsTokens := (len(compact) + 3) / 4

		c0 := l.ask("required", true)
		require.NotEmpty(t, c0, "tool_choice required calls")
		synctest.Wait()
		_, rows := readTrace(t, pr.buf.String())
		assert.Empty(t, rows, "the row waits for the request that carries its results")
		l.answer(c0, 2*time.Second)
		c1 := l.ask("required", false) // non-streaming: message.tool_calls
		require.NotEmpty(t, c1)
		l.answer(c1, 500*time.Millisecond)
		c2 := l.ask("none", true)
		require.Empty(t, c2, "tool_choice none answers")
		// A new task whose reply calls tools, then a message that brings no results.
		l.msgs = append(l.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "now add a test"})
		c3 := l.ask("required", true)
		require.NotEmpty(t, c3)
		time.Sleep(time.Second)
		l.msgs = append(l.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "never mind"})
		_ = l.ask("none", false)
		// Another conversation's reply calls tools, and the harness stops there.
		c5 := newToolLoop(t, c, "explain the build").ask("required", true)
		require.NotEmpty(t, c5)
		pr.stop(t)

		_, rows = readTrace(t, pr.buf.String())
		require.Len(t, rows, 6)
		bySession := map[string][]trace.Request{}
		for _, r := range rows {
			bySession[r.Session] = append(bySession[r.Session], r)
		}
		require.Len(t, bySession, 2)
		s := bySession["c1"]
		require.Len(t, s, 5)
		for i, want := range []struct {
			calls []openai.ToolCall
			toolS *float64
		}{{c0, floatp(2)}, {c1, floatp(0.5)}, {nil, nil}, {c3, nil}} {
			r := s[i]
			assert.Equal(t, toolsTokens, r.ToolsTokens, "seq %d", i)
			assert.Equal(t, len(want.calls), r.ToolCalls, "seq %d", i)
			assert.Equal(t, names(want.calls), r.ToolNames, "seq %d", i)
			if want.toolS == nil {
				assert.Nil(t, r.ToolS, "seq %d", i)
				continue
			}
			require.NotNil(t, r.ToolS, "seq %d", i)
			assert.InDelta(t, *want.toolS, *r.ToolS, 1e-3, "seq %d", i)
			assert.Equal(t, *r.ToolS, s[i+1].AfterS, "seq %d: the tool time is the whole gap a proxy sees", i)
			assert.Equal(t, "tool_calls", r.FinishReason, "seq %d", i)
			require.NotNil(t, s[i+1].Extends, "seq %d", i+1)
		}
		last := bySession["c2"]
		require.Len(t, last, 1)
		assert.Equal(t, len(c5), last[0].ToolCalls, "written at the end, without a tool time")
		assert.Nil(t, last[0].ToolS)

		// trace show: c1's first task took three requests, its second (which dropped its
		// calls' results) one, and so did the one after it and c2's.
		acc := tracestats.New(trace.Header{})
		for _, r := range rows {
			acc.Add(r)
		}
		tl := acc.Summary().Tools
		require.NotNil(t, tl)
		assert.Equal(t, 6, tl.OfferingRequests)
		assert.Equal(t, len(c0)+len(c1)+len(c3)+len(c5), tl.Calls)
		assert.Equal(t, 2, tl.ToolTimeS.N)
		assert.InDelta(t, 2.5, tl.ToolTimeS.TotalS, 2e-3)
		assert.Equal(t, tracestats.Dist{N: 4, P50: 1, P90: 3, Max: 3}, tl.StepsPerTask)

		// trace fit: a tool loop of the coding set, whose read and grep it calls.
		res, err := tracefit.FromTrace(strings.NewReader(pr.buf.String()), "trace.jsonl", tracefit.Options{})
		require.NoError(t, err)
		assert.Equal(t, workloads.ToolSetCoding, res.Workload.Tools.Set)
		assert.Equal(t, workloads.Const(0), res.Workload.Context.ReadTokens)
		var keys []string
		for _, q := range res.Quantities {
			keys = append(keys, q.Key)
		}
		assert.Subset(t, keys, []string{"tools.latency", "tools.result_tokens", "task.steps", "task.calls_per_step"})
	})
}

func floatp(f float64) *float64 { return &f }
