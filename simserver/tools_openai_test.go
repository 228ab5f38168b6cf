package simserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// openaiTools is the tools array as go-openai sends it.
func openaiTools(t *testing.T, defs ...string) []openai.Tool {
	t.Helper()
	var out []openai.Tool
	require.NoError(t, json.Unmarshal([]byte("["+strings.Join(defs, ",")+"]"), &out))
	return out
}

// reply is one streamed reply read with go-openai: its content, its calls put together by
// index, and its finish reason.
type reply struct {
	content string
	calls   []openai.ToolCall
	finish  openai.FinishReason
}

// streamReply sends a streaming request with go-openai and puts the reply together as a
// harness does.
func streamReply(t *testing.T, c *openai.Client, req openai.ChatCompletionRequest) reply {
	t.Helper()
	req.Stream = true
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer stream.Close()
	var r reply
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return r
		}
		require.NoError(t, err)
		if len(resp.Choices) == 0 {
			continue
		}
		ch := resp.Choices[0]
		r.content += ch.Delta.Content
		for _, d := range ch.Delta.ToolCalls {
			require.NotNil(t, d.Index, "every tool-call delta carries its index")
			if *d.Index == len(r.calls) {
				r.calls = append(r.calls, openai.ToolCall{ID: d.ID, Type: d.Type, Function: openai.FunctionCall{Name: d.Function.Name}})
			}
			r.calls[*d.Index].Function.Arguments += d.Function.Arguments
		}
		if ch.FinishReason != "" {
			r.finish = ch.FinishReason
		}
	}
}

// runConversation drives a tool loop with go-openai as a harness does: it sends the tools,
// appends each reply's calls and one result per call, and goes on until a reply without a
// call. It returns the steps with tool calls and the final answer.
func runConversation(t *testing.T, c *openai.Client, task string, defs ...string) (steps [][]openai.ToolCall, answer string) {
	t.Helper()
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "you are a coding agent"},
		{Role: openai.ChatMessageRoleUser, Content: task},
	}
	for range 200 {
		r := streamReply(t, c, openai.ChatCompletionRequest{Model: "deepseek-v4-flash", Messages: msgs, Tools: openaiTools(t, defs...)})
		if len(r.calls) == 0 {
			assert.Equal(t, openai.FinishReasonStop, r.finish)
			return steps, r.content
		}
		assert.Equal(t, openai.FinishReasonToolCalls, r.finish)
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: r.calls})
		for _, call := range r.calls {
			checkArguments(t, call.Function.Name, call.Function.Arguments)
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: "no match"})
		}
		steps = append(steps, r.calls)
	}
	t.Fatal("no final answer after 200 replies")
	return nil, ""
}

// TestToolConversationWithGoOpenAI drives tool loops with go-openai: each reply's calls are
// put together from their deltas, satisfy their schemas and never name the tool that runs
// commands or the one that asks a person; the loop ends with a final answer after the tool
// steps the conversation drew; the same conversation draws the same steps again.
func TestToolConversationWithGoOpenAI(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		c := ts.openaiClient("")
		defs := []string{readTool, grepTool, bashTool, askTool, webTool}
		total := 0
		for _, task := range []string{"find the bug", "add a test", "explain the build", "fix the lint"} {
			steps, answer := runConversation(t, c, task, defs...)
			assert.NotEmpty(t, answer, "%q ends with an answer", task)
			total += len(steps)
			calls := 0
			for _, s := range steps {
				calls += len(s)
			}
			t.Logf("%q: %d tool steps, %d calls, then the answer", task, len(steps), calls)
			again, _ := runConversation(t, c, task, defs...)
			assert.Equal(t, steps, again, "%q: the same conversation, the same calls", task)
		}
		assert.GreaterOrEqual(t, total, 4, "conversations take tool steps (8.8 calls per request on average)")
	})
}

// TestToolChoice: none never calls, required always calls (even once the conversation has had
// its tool steps), a named function calls that one, and parallel_tool_calls false makes one
// call per reply where the profile makes several.
func TestToolChoice(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.Agent.CallsPerRequest = 1 // auto answers at once
		p.Agent.CallsPerReply, p.Agent.CallsPerReplyP99 = 3, 12
		ts := startServer(t, simserver.Options{Profile: p})
		c := ts.openaiClient("")
		req := func(choice any, parallel any) openai.ChatCompletionRequest {
			return openai.ChatCompletionRequest{Model: "deepseek-v4-flash", Tools: openaiTools(t, readTool, grepTool, bashTool), ToolChoice: choice,
				ParallelToolCalls: parallel, Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "look"}}}
		}
		auto := streamReply(t, c, req(nil, nil))
		assert.Empty(t, auto.calls, "auto, with no tool steps drawn, answers")
		none := streamReply(t, c, req("none", nil))
		assert.Empty(t, none.calls)
		assert.NotEmpty(t, none.content)
		assert.Equal(t, openai.FinishReasonStop, none.finish)

		required := streamReply(t, c, req("required", nil))
		assert.NotEmpty(t, required.calls, "required calls")
		named := streamReply(t, c, req(openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "grep"}}, nil))
		require.Len(t, named.calls, 1, "a named function is called once")
		assert.Equal(t, "grep", named.calls[0].Function.Name)

		several := 0
		for i := range 20 {
			r := req("required", false)
			r.Messages[0].Content = string(rune('a' + i))
			single := streamReply(t, c, r)
			assert.Len(t, single.calls, 1, "parallel_tool_calls false: one call per reply")
			r.ParallelToolCalls = nil
			if len(streamReply(t, c, r).calls) > 1 {
				several++
			}
		}
		assert.Positive(t, several, "with parallel calls allowed, some replies make several")
	})
}

// TestToolCallsWholeWithGoOpenAI: a non-streaming reply's tool calls as go-openai reads them.
func TestToolCallsWholeWithGoOpenAI(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp, err := ts.openaiClient("").CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "deepseek-v4-flash", Tools: openaiTools(t, readTool, grepTool), ToolChoice: "required",
			Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "look"}},
		})
		require.NoError(t, err)
		ch := resp.Choices[0]
		assert.Equal(t, openai.FinishReasonToolCalls, ch.FinishReason)
		require.NotEmpty(t, ch.Message.ToolCalls)
		for _, call := range ch.Message.ToolCalls {
			assert.Equal(t, openai.ToolTypeFunction, call.Type)
			assert.NotEmpty(t, call.ID)
			checkArguments(t, call.Function.Name, call.Function.Arguments)
		}
		assert.Empty(t, ch.Message.Content)
	})
}

// TestRiskyToolsAllowed: a profile's agent.allow lets the model call a tool it otherwise never
// calls, and only then may tool_choice name it.
func TestRiskyToolsAllowed(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.Agent.Allow = []string{"bash"}
		c := startServer(t, simserver.Options{Profile: p}).openaiClient("")
		r := streamReply(t, c, openai.ChatCompletionRequest{Model: "deepseek-v4-flash", Tools: openaiTools(t, bashTool),
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "bash"}},
			Messages:   []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "look"}}})
		require.Len(t, r.calls, 1)
		checkArguments(t, "bash", r.calls[0].Function.Arguments)
	})
}
