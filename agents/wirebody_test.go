package agents

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/workloads"
)

// wireTestAgent is an agent whose conversation has every kind of message a body writes: a
// generated system prompt and task, an assistant reply with text and tool calls, one with
// calls alone, tool results (one empty), text with characters JSON escapes, and an empty
// reply.
func wireTestAgent(system bool) *Agent {
	w := workloads.Defaults()
	w.Seed = 11
	a := NewAgent(3, &Env{Workload: &w, Calibration: NewCalibration()})
	if system {
		a.say(openai.ChatMessageRoleSystem, "system", 0, 300)
	}
	a.say(openai.ChatMessageRoleUser, "task", 0, 5000)
	calls := []ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"a<b>.go"}`}, {ID: "call_2", Name: "grep", Arguments: `{}`}}
	a.messages = append(a.messages, message{role: openai.ChatMessageRoleAssistant, content: "looking \"here\"\n\u2028 & there", calls: calls})
	a.sayTool(1, 0, 700, calls[:1])
	a.messages = append(a.messages, message{role: openai.ChatMessageRoleTool, calls: calls[1:]})
	a.messages = append(a.messages, message{role: openai.ChatMessageRoleAssistant, calls: []ToolCall{{ID: "call_3", Name: "ls", Arguments: `{"dir":"."}`}}})
	a.sayTool(2, 0, 10, []ToolCall{{ID: "call_3"}})
	a.messages = append(a.messages, message{role: openai.ChatMessageRoleAssistant})
	a.say(openai.ChatMessageRoleSystem, "later", 2, 20)
	a.say(openai.ChatMessageRoleUser, "read", 3, 900)
	return a
}

// sendBodies sends req through requestTransport twice — written by go-openai whole, and
// written as it is read — and returns both bodies as read and the second's declared length.
func sendBodies(t *testing.T, req *Request, read int) (whole, wired []byte, declared int64) {
	t.Helper()
	var bodies [][]byte
	var lengths []int64
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var got []byte
		buf := make([]byte, read)
		for {
			n, err := r.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
		}
		bodies, lengths = append(bodies, got), append(lengths, r.ContentLength)
		return &http.Response{StatusCode: 400, Body: io.NopCloser(http.NoBody)}, nil
	})
	c := NewClient("http://sim/v1", "", &http.Client{Transport: next}, nil, nil)
	for _, wired := range []bool{false, true} {
		ctx := context.Background()
		if req.IgnoreEOS {
			ctx = withBodyFields(ctx, ignoreEOS)
		}
		if wired {
			plan, err := c.wirePlan(req)
			require.NoError(t, err)
			require.NotNil(t, plan)
			ctx = context.WithValue(ctx, wirePlanKey{}, plan)
		}
		if req.API == workloads.APIResponses {
			_, _ = c.api.CreateResponseStream(ctx, req.responseRequest(wired))
		} else {
			_, _ = c.api.CreateChatCompletionStream(ctx, req.chatRequest(wired))
		}
	}
	require.Len(t, bodies, 2)
	return bodies[0], bodies[1], lengths[1]
}

// TestWireBody checks that a body written as it is read holds what go-openai would have sent
// — the same JSON, whatever the size of the reads — and declares its length, through both
// APIs, with and without tools, a system prompt and extra fields.
func TestWireBody(t *testing.T) {
	set, ok := workloads.BuiltinToolSet("coding")
	require.True(t, ok)
	for _, api := range []string{workloads.APIChat, workloads.APIResponses} {
		for _, system := range []bool{true, false} {
			a := wireTestAgent(system)
			req := &Request{API: api, Model: "m", Conversation: (*conversation)(a), MaxTokens: 99, ReasoningEffort: "low"}
			if system {
				req.Tools, req.ToolChoice, req.ParallelToolCalls = set.Tools(), "auto", true
				req.IgnoreEOS = true
			}
			for _, read := range []int{1, 7, 4096, 1 << 20} {
				whole, wired, declared := sendBodies(t, req, read)
				assert.Equal(t, int64(len(wired)), declared, "%s, system %v, reads of %d: declared length", api, system, read)
				var want, got any
				require.NoError(t, json.Unmarshal(whole, &want))
				require.NoError(t, json.Unmarshal(wired, &got), "%s", wired)
				assert.Equal(t, want, got, "%s, system %v, reads of %d", api, system, read)
			}
		}
	}
}

// TestWireBodyEmpty checks a conversation of no messages, and of instructions alone.
func TestWireBodyEmpty(t *testing.T) {
	for _, api := range []string{workloads.APIChat, workloads.APIResponses} {
		w := workloads.Defaults()
		a := NewAgent(0, &Env{Workload: &w, Calibration: NewCalibration()})
		for range 2 {
			req := &Request{API: api, Model: "m", Conversation: (*conversation)(a)}
			whole, wired, declared := sendBodies(t, req, 64)
			assert.Equal(t, int64(len(wired)), declared)
			assert.JSONEq(t, string(whole), string(wired), "%s, %d messages", api, len(a.messages))
			a.say(openai.ChatMessageRoleSystem, "system", 0, 5)
		}
	}
}

// TestWireBodyClosed checks that a body closed while it is read fails the read, and that
// again gives it from its start.
func TestWireBodyClosed(t *testing.T) {
	a := wireTestAgent(true)
	plan := (*conversation)(a).plan(wireChat, nil)
	b, n, err := newWireBody(plan, []byte(`{"model":"m","messages":null}`))
	require.NoError(t, err)
	first := make([]byte, 100)
	_, err = io.ReadFull(b, first)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	_, err = b.Read(first)
	assert.ErrorIs(t, err, errBodyClosed)
	again, err := b.again()
	require.NoError(t, err)
	all, err := io.ReadAll(again)
	require.NoError(t, err)
	assert.Len(t, all, int(n))
	assert.Equal(t, first, all[:100])
}
