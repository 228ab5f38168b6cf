package simserver_test

import (
	"context"
	"errors"
	"io"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/simserver"
)

// TestOpenAIClientResponseStream reads a Responses API stream with go-openai's
// CreateResponseStream: response.created first, function_call items with call_id, name and
// arguments, no call of the web_search tool, response.completed last with usage, io.EOF after
// it; then CreateResponse continues the response with the calls' outputs.
func TestOpenAIClientResponseStream(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{APIKey: "sk-test", Profile: admissionProfile()})
		client := ts.openaiClient("sk-test")
		read := openai.NewResponseFunctionTool(openai.FunctionDefinition{Name: "read", Parameters: map[string]any{
			"type": "object", "properties": map[string]any{"filePath": map[string]any{"type": "string"}}, "required": []string{"filePath"}}})
		req := openai.CreateResponseRequest{
			Model:        "deepseek-v4-flash",
			Instructions: "you are a coding agent",
			Input:        "find the bug",
			Tools:        []openai.ResponseTool{read, {Type: "web_search"}},
			ToolChoice:   "required",
			Reasoning:    &openai.ResponseReasoning{Effort: "low", Summary: "auto"},
		}
		stream, err := client.CreateResponseStream(context.Background(), req)
		require.NoError(t, err)
		defer stream.Close()
		var events []openai.ResponseStreamEvent
		for {
			e, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			events = append(events, e)
		}
		require.NotEmpty(t, events)
		assert.Equal(t, openai.ResponseStreamEventCreated, events[0].Type)
		last := events[len(events)-1]
		require.Equal(t, openai.ResponseStreamEventCompleted, last.Type)
		require.NotNil(t, last.Response.Usage)
		assert.Positive(t, last.Response.Usage.OutputTokensDetails.ReasoningTokens)
		var calls []*openai.ResponseOutputItem
		for _, e := range events {
			if e.Type == openai.ResponseStreamEventOutputItemDone && e.Item.Type == "function_call" {
				calls = append(calls, e.Item)
			}
		}
		require.NotEmpty(t, calls)
		var outputs []any
		for _, c := range calls {
			assert.Equal(t, "read", c.Name, "web_search is never called as a function")
			assert.NotEmpty(t, c.CallID)
			checkArguments(t, "read", c.Arguments)
			outputs = append(outputs, map[string]any{"type": "function_call_output", "call_id": c.CallID, "output": "the file"})
		}

		req.Input, req.PreviousResponseID, req.ToolChoice = outputs, last.Response.ID, "none"
		resp, err := client.CreateResponse(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "completed", string(resp.Status))
		require.NotNil(t, resp.Usage)
		assert.Greater(t, resp.Usage.InputTokensDetails.CachedTokens, 0, "the chain's prompt is cached")
	})
}
