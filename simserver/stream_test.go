package simserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentsim/agentsim/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunk is the decoded form of a chat.completion.chunk frame.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int               `json:"index"`
		Delta        map[string]string `json:"delta"`
		FinishReason *string           `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

// streamResult is a whole stream read back: its chunks and the text in each field.
type streamResult struct {
	frames    []frame
	chunks    []chunk
	reasoning string
	content   string
	finish    string
	done      bool
}

// decodeStream checks the per-chunk invariants every stream must hold and gathers the text.
func decodeStream(t *testing.T, frames []frame, reasoningField string) streamResult {
	t.Helper()
	r := streamResult{frames: frames}
	for i, f := range frames {
		if f.data == "[DONE]" {
			assert.Equal(t, len(frames)-1, i, "[DONE] must be the last frame")
			r.done = true
			continue
		}
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(f.data), &c), "frame %d: %s", i, f.data)
		require.Equal(t, "chat.completion.chunk", c.Object, "frame %d", i)
		if i > 0 {
			assert.Equal(t, r.chunks[0].ID, c.ID, "frame %d id", i)
			assert.Equal(t, r.chunks[0].Created, c.Created, "frame %d created", i)
			assert.Equal(t, r.chunks[0].Model, c.Model, "frame %d model", i)
		}
		if len(c.Choices) == 1 {
			d := c.Choices[0].Delta
			_, hasR := d[reasoningField]
			_, hasC := d["content"]
			if i > 0 {
				assert.False(t, hasR && hasC, "frame %d mixes reasoning and content: %s", i, f.data)
			}
			if hasR {
				assert.Empty(t, r.content, "frame %d: reasoning after content", i)
			}
			r.reasoning += d[reasoningField]
			if i > 0 {
				r.content += d["content"]
			}
			if fr := c.Choices[0].FinishReason; fr != nil {
				r.finish = *fr
				assert.Empty(t, d, "finish chunk has an empty delta")
			}
		}
		r.chunks = append(r.chunks, c)
	}
	require.NotEmpty(t, r.chunks)
	assert.Equal(t, map[string]string{"role": "assistant", "content": ""}, r.chunks[0].Choices[0].Delta, "first delta")
	assert.True(t, strings.HasPrefix(r.chunks[0].ID, "chatcmpl-"), "id %q", r.chunks[0].ID)
	return r
}

// streamBody is a streaming request body with extra fields.
func streamBody(extra string) string {
	return `{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"say something"}],"stream":true` + extra + `}`
}

// TestStreamFraming reads a raw stream and checks its exact SSE framing: headers, the role
// delta first, no mixed chunks, the finish chunk, the usage chunk with "choices":[] and
// [DONE] last.
func TestStreamFraming(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp := ts.post(context.Background(), streamBody(`,"stream_options":{"include_usage":true},"max_tokens":40,"ignore_eos":true,"reasoning_effort":"low"`))
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		r := decodeStream(t, frames, simserver.FieldReasoningContent)
		require.True(t, r.done)

		n := len(r.chunks)
		usageChunk, finishChunk := r.chunks[n-1], r.chunks[n-2]
		assert.Equal(t, "length", r.finish)
		require.Len(t, finishChunk.Choices, 1)
		assert.Equal(t, "length", *finishChunk.Choices[0].FinishReason)
		assert.Contains(t, frames[n-1].data, `"choices":[]`)
		require.NotNil(t, usageChunk.Usage)
		u := usageChunk.Usage
		assert.Equal(t, 40, u.CompletionTokens, "ignore_eos gives exactly max_tokens")
		assert.Equal(t, u.PromptTokens+u.CompletionTokens, u.TotalTokens)
		assert.Equal(t, 20, u.CompletionTokensDetails.ReasoningTokens, "low effort: half reasoning")
		assert.Equal(t, simserver.CountTokens("be brief")+simserver.CountTokens("say something")+2*4+3, u.PromptTokens)
		assert.Equal(t, 20, simserver.CountTokens(r.reasoning), "reasoning text %q", r.reasoning)
		assert.Equal(t, 20, simserver.CountTokens(r.content), "content text %q", r.content)
		for i, f := range frames[:n-1] {
			assert.Contains(t, f.data, `"usage":null`, "frame %d", i)
		}
		for i, c := range r.chunks[1 : n-2] {
			d := c.Choices[0].Delta
			text := d[simserver.FieldReasoningContent] + d["content"]
			assert.Equal(t, 1, simserver.CountTokens(text), "chunk %d carries the profile's stream_interval of tokens, 1", i+1)
		}
	})
}

// TestStreamWithoutUsage checks that without include_usage no chunk carries usage and the
// finish chunk is followed by [DONE].
func TestStreamWithoutUsage(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp := ts.post(context.Background(), streamBody(`,"max_tokens":10,"ignore_eos":true`))
		defer resp.Body.Close()
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		r := decodeStream(t, frames, simserver.FieldReasoningContent)
		require.True(t, r.done)
		for _, f := range frames {
			assert.NotContains(t, f.data, `"usage"`)
		}
		assert.Equal(t, "length", r.finish)
		assert.Equal(t, 10, simserver.CountTokens(r.content))
		assert.Empty(t, r.reasoning)
	})
}

// TestMaxTokens checks the output caps: max_completion_tokens alone, both (the smaller wins),
// reasoning counting against the cap, and natural lengths ending with "stop".
func TestMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		extra                 string
		completion, reasoning int // -1: any
		finish                string
	}{
		// max_completion_tokens caps a natural output (200–800 tokens).
		{"max_completion_tokens", `,"max_completion_tokens":25`, 25, 0, "length"},
		// Both set: the smaller one.
		{"both", `,"max_tokens":30,"max_completion_tokens":12`, 12, 0, "length"},
		{"both-reversed", `,"max_tokens":9,"max_completion_tokens":50`, 9, 0, "length"},
		// High effort reasons for 80% of 2000+ tokens: all 100 allowed tokens are reasoning
		// and the content is empty, as for a real reasoning model.
		{"reasoning-counts", `,"max_tokens":100,"reasoning_effort":"high"`, 100, 100, "length"},
		// Without a cap the output has its natural length and stops.
		{"natural", ``, -1, 0, "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				ts := startServer(t, simserver.Options{})
				resp := ts.post(context.Background(), streamBody(`,"stream_options":{"include_usage":true}`+tc.extra))
				defer resp.Body.Close()
				frames, err := readFrames(ts.clk, resp.Body)
				require.NoError(t, err)
				r := decodeStream(t, frames, simserver.FieldReasoningContent)
				u := r.chunks[len(r.chunks)-1].Usage
				require.NotNil(t, u)
				if tc.completion >= 0 {
					assert.Equal(t, tc.completion, u.CompletionTokens, "completion_tokens")
				} else {
					assert.GreaterOrEqual(t, u.CompletionTokens, 200)
					assert.LessOrEqual(t, u.CompletionTokens, 800)
				}
				assert.Equal(t, tc.reasoning, u.CompletionTokensDetails.ReasoningTokens, "reasoning_tokens")
				assert.Equal(t, u.CompletionTokens-tc.reasoning, simserver.CountTokens(r.content), "content tokens")
				assert.Equal(t, tc.finish, r.finish)
			})
		})
	}
}

// TestReasoningFieldName checks that ReasoningField "reasoning" renames the delta field, as
// newer vLLM does.
func TestReasoningFieldName(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{ReasoningField: simserver.FieldReasoning})
		resp := ts.post(context.Background(), streamBody(`,"max_tokens":16,"ignore_eos":true,"reasoning_effort":"low"`))
		defer resp.Body.Close()
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		raw := fmt.Sprint(frames)
		assert.Contains(t, raw, `"reasoning":"`)
		assert.NotContains(t, raw, "reasoning_content")
		r := decodeStream(t, frames, simserver.FieldReasoning)
		assert.Equal(t, 8, simserver.CountTokens(r.reasoning))
		assert.Equal(t, 8, simserver.CountTokens(r.content))
	})
}

// TestNonStreaming checks the chat.completion object: message content and reasoning, finish
// reason and usage, and that its text is the one the stream would send.
func TestNonStreaming(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{ServedModelNames: []string{"deepseek-v4-flash", "any-name"}})
		body := `{"model":"any-name","messages":[{"role":"user","content":[{"type":"text","text":"hello"},{"type":"text","text":"world"}]}],"max_tokens":30,"ignore_eos":true,"reasoning_effort":"low"}`
		resp := ts.post(context.Background(), body)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Model   string `json:"model"`
			Choices []struct {
				Message      map[string]any `json:"message"`
				FinishReason string         `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				PromptTokens            int `json:"prompt_tokens"`
				CompletionTokens        int `json:"completion_tokens"`
				TotalTokens             int `json:"total_tokens"`
				CompletionTokensDetails struct {
					ReasoningTokens int `json:"reasoning_tokens"`
				} `json:"completion_tokens_details"`
			} `json:"usage"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		assert.Equal(t, "chat.completion", c.Object)
		assert.Equal(t, "any-name", c.Model, "the requested model, one of the served names, is echoed")
		require.Len(t, c.Choices, 1)
		assert.Equal(t, "length", c.Choices[0].FinishReason)
		m := c.Choices[0].Message
		assert.Equal(t, "assistant", m["role"])
		assert.Equal(t, 15, simserver.CountTokens(m["content"].(string)))
		assert.Equal(t, 15, simserver.CountTokens(m[simserver.FieldReasoningContent].(string)))
		assert.Equal(t, 30, c.Usage.CompletionTokens)
		assert.Equal(t, 15, c.Usage.CompletionTokensDetails.ReasoningTokens)
		assert.Equal(t, simserver.CountTokens("hello")+simserver.CountTokens("world")+4+3, c.Usage.PromptTokens)
		assert.Equal(t, c.Usage.PromptTokens+30, c.Usage.TotalTokens)
	})
}

// TestFollowUpTurnHitsPrefixCache sends a conversation, then the same conversation with the
// reply and a new question appended, and checks the second reports the first's prompt as
// cached tokens.
func TestFollowUpTurnHitsPrefixCache(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		ask := func(body string) *chunk {
			resp := ts.post(context.Background(), body)
			defer resp.Body.Close()
			frames, err := readFrames(ts.clk, resp.Body)
			require.NoError(t, err)
			r := decodeStream(t, frames, simserver.FieldReasoningContent)
			return &r.chunks[len(r.chunks)-1]
		}
		const turn1 = `{"role":"system","content":"you are an agent"},{"role":"user","content":"open the page"}`
		u1 := ask(`{"model":"deepseek-v4-flash","stream":true,"stream_options":{"include_usage":true},"max_tokens":20,"ignore_eos":true,"messages":[` + turn1 + `]}`).Usage
		require.NotNil(t, u1)
		assert.Zero(t, u1.PromptTokensDetails.CachedTokens)
		u2 := ask(`{"model":"deepseek-v4-flash","stream":true,"stream_options":{"include_usage":true},"max_tokens":20,"ignore_eos":true,"messages":[` +
			turn1 + `,{"role":"assistant","content":"done"},{"role":"user","content":"now read it"}]}`).Usage
		require.NotNil(t, u2)
		assert.Equal(t, u1.PromptTokens-3, u2.PromptTokensDetails.CachedTokens, "the first turn's messages are cached")
	})
}
