package simserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// openaiClient is a go-openai client of the test server, used as any harness would use it.
func (ts *testServer) openaiClient(key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = ts.url + "/v1"
	cfg.HTTPClient = ts.client
	return openai.NewClientWithConfig(cfg)
}

// TestOpenAIClientStream reads a reasoning stream with go-openai: reasoning deltas
// (simserver.FieldReasoningContent), then content deltas, the usage chunk, and io.EOF after [DONE].
func TestOpenAIClientStream(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{APIKey: "sk-test"})
		stream, err := ts.openaiClient("sk-test").CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
			Model:           "deepseek-v4-flash",
			Messages:        []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "plan the next step"}},
			Stream:          true,
			StreamOptions:   &openai.StreamOptions{IncludeUsage: true},
			ReasoningEffort: "low",
		})
		require.NoError(t, err)
		defer stream.Close()
		var reasoning, content string
		var reasoningChunks, contentChunks int
		var finish openai.FinishReason
		var usage *openai.Usage
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if resp.Usage != nil {
				usage = resp.Usage
				assert.Empty(t, resp.Choices, "the usage chunk has no choices")
				continue
			}
			require.Len(t, resp.Choices, 1)
			d := resp.Choices[0].Delta
			if d.ReasoningContent != "" {
				assert.Empty(t, content, "reasoning after content")
				reasoning += d.ReasoningContent
				reasoningChunks++
			}
			if d.Content != "" {
				content += d.Content
				contentChunks++
			}
			if resp.Choices[0].FinishReason != "" {
				finish = resp.Choices[0].FinishReason
			}
		}
		assert.Positive(t, reasoningChunks)
		assert.Positive(t, contentChunks)
		assert.Equal(t, openai.FinishReasonStop, finish)
		require.NotNil(t, usage, "usage chunk")
		require.NotNil(t, usage.CompletionTokensDetails)
		assert.Equal(t, simserver.CountTokens(reasoning), usage.CompletionTokensDetails.ReasoningTokens)
		assert.Equal(t, simserver.CountTokens(reasoning)+simserver.CountTokens(content), usage.CompletionTokens)
		assert.Equal(t, usage.PromptTokens+usage.CompletionTokens, usage.TotalTokens)
		assert.InDelta(t, 0.5, float64(usage.CompletionTokensDetails.ReasoningTokens)/float64(usage.CompletionTokens), 0.01,
			"low effort reasons for half the output")
	})
}

// TestOpenAIClientNonStream reads a whole completion with go-openai.
func TestOpenAIClientNonStream(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{ServedModelNames: []string{"whatever"}})
		resp, err := ts.openaiClient("unused").CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model:               "whatever",
			Messages:            []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
			MaxCompletionTokens: 32,
			ReasoningEffort:     "medium",
		})
		require.NoError(t, err)
		assert.Equal(t, "whatever", resp.Model)
		require.Len(t, resp.Choices, 1)
		assert.Equal(t, openai.FinishReasonLength, resp.Choices[0].FinishReason)
		assert.Equal(t, 32, resp.Usage.CompletionTokens)
		assert.Equal(t, 32, simserver.CountTokens(resp.Choices[0].Message.ReasoningContent)+simserver.CountTokens(resp.Choices[0].Message.Content))
	})
}

// TestOpenAIClientErrors checks that go-openai classifies the server's errors: a 401 before
// the stream as an *openai.APIError with its status, and an error frame inside a stream as an
// error from Recv.
func TestOpenAIClientErrors(t *testing.T) {
	bubble(t, func(t *testing.T) {
		faults, err := engine.ParseFaults([]string{"errors"}, []string{"rate=1", "kind=frame"}, 1)
		require.NoError(t, err)
		ts := startServer(t, simserver.Options{APIKey: "sk-right", Faults: faults})
		req := openai.ChatCompletionRequest{
			Model:    "deepseek-v4-flash",
			Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
			Stream:   true,
		}
		_, err = ts.openaiClient("sk-wrong").CreateChatCompletionStream(context.Background(), req)
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusUnauthorized, apiErr.HTTPStatusCode)
		assert.NotContains(t, err.Error(), "sk-right")

		stream, err := ts.openaiClient("sk-right").CreateChatCompletionStream(context.Background(), req)
		require.NoError(t, err)
		defer stream.Close()
		for {
			_, err = stream.Recv()
			if err != nil {
				break
			}
		}
		require.ErrorAs(t, err, &apiErr, "an error frame surfaces as an APIError")
		assert.Equal(t, "InternalServerError", apiErr.Type)
	})
}
