package calibrate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Client sends calibration requests to one OpenAI-compatible server and times them on one
// clock: the real one against a real server, the simulator's against an agentsim server.
type Client struct {
	// URL is the server's base URL, without /v1.
	URL string
	// Model is the model name every request sends.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// HTTP carries the requests.
	HTTP *http.Client
	// Clock times them.
	Clock *clock.Clock
}

// Request is one calibration request: a conversation whose last message is the user's, an
// output forced to MaxTokens with ignore_eos.
type Request struct {
	// Messages are the conversation's user and assistant turns, alternating, the last a user's.
	Messages []string
	// Estimate is the prompt's length in agentsim's estimate (simserver.CountTokens plus the
	// chat framing), the tokenizer ratio's denominator.
	Estimate int
	// MaxTokens is the output asked for, in the server's tokens.
	MaxTokens int
}

// Obs is what one request showed: when it was sent, when each content chunk arrived, what
// usage said, and how it failed, if it did. Times are on the Client's clock.
type Obs struct {
	Request Request
	// Start is when the request was sent; Chunks when each chunk with text arrived; Done when
	// the response ended.
	Start  time.Time
	Chunks []time.Time
	Done   time.Time
	// PromptTokens and CompletionTokens are usage's, 0 when the server sent none.
	PromptTokens, CompletionTokens int
	// Server is the server's own account of the prompt's work, when its stream gave one
	// (llama-server's timings); nil when it gave none.
	Server *ServerTimings
	// Status is the HTTP status (0: no response).
	Status int
	// Err says how it failed ("" when it did not); MidStream that it failed after its stream
	// had begun.
	Err       string
	MidStream bool
}

// ServerTimings is what a server said of its own work for a request's prompt: llama-server's
// last stream chunk carries timings.prompt_n (the prompt tokens it computed), cache_n (those it
// found in its cache) and prompt_ms (its time from starting the prompt to sampling the first
// token; tools/server/server-common.cpp, server_slot_stats::to_json).
type ServerTimings struct {
	Computed, Cached int
	Prompt           time.Duration
}

// OK reports whether the request completed with at least one token.
func (o *Obs) OK() bool { return o.Err == "" && len(o.Chunks) > 0 }

// TTFT is the time from the send to the first chunk.
func (o *Obs) TTFT() time.Duration { return o.Chunks[0].Sub(o.Start) }

// Tokens is the number of output tokens: usage's, or the chunks when usage is missing.
func (o *Obs) Tokens() int {
	if o.CompletionTokens > 0 {
		return o.CompletionTokens
	}
	return len(o.Chunks)
}

// TPOT is the mean time per output token after the first.
func (o *Obs) TPOT() time.Duration {
	n := o.Tokens()
	if n < 2 || len(o.Chunks) < 2 {
		return 0
	}
	return o.Chunks[len(o.Chunks)-1].Sub(o.Chunks[0]) / time.Duration(n-1)
}

// body is the request's JSON.
func (c *Client) body(r Request) []byte {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	msgs := make([]message, len(r.Messages))
	for i, m := range r.Messages {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = message{role, m}
	}
	b, _ := json.Marshal(map[string]any{
		"model": c.Model, "messages": msgs, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     r.MaxTokens, "ignore_eos": true, "temperature": 0,
	})
	return b
}

// Send sends one request and reads its stream to the end.
func (c *Client) Send(ctx context.Context, r Request) (o Obs) {
	o = Obs{Request: r, Start: c.Clock.Now()}
	defer func() { o.Done = c.Clock.Now() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/v1/chat/completions", bytes.NewReader(c.body(r)))
	if err != nil {
		o.Err = err.Error()
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		o.Err = err.Error()
		return o
	}
	defer resp.Body.Close()
	o.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		o.Err = fmt.Sprintf("%d: %s", resp.StatusCode, strings.TrimSpace(errorMessage(b)))
		return o
	}
	c.read(resp.Body, &o)
	return o
}

// chunk is the part of a stream chunk calibration reads.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Timings *struct {
		CacheN   int     `json:"cache_n"`
		PromptN  int     `json:"prompt_n"`
		PromptMs float64 `json:"prompt_ms"`
	} `json:"timings"`
}

// read reads a stream's SSE frames into o.
func (c *Client) read(body io.Reader, o *Obs) {
	br := bufio.NewReaderSize(body, 64<<10)
	done := false
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			if data == "[DONE]" {
				done = true
				break
			}
			var ch chunk
			if json.Unmarshal([]byte(data), &ch) != nil {
				continue
			}
			if len(ch.Error) > 0 && string(ch.Error) != "null" {
				o.Err, o.MidStream = "in stream: "+errorMessage([]byte(data)), true
				return
			}
			for _, choice := range ch.Choices {
				d := choice.Delta
				if d.Content != "" || d.ReasoningContent != "" || d.Reasoning != "" {
					o.Chunks = append(o.Chunks, c.Clock.Now())
					break
				}
			}
			if ch.Usage != nil {
				o.PromptTokens, o.CompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
			}
			if t := ch.Timings; t != nil && t.PromptN > 0 && t.PromptMs > 0 {
				o.Server = &ServerTimings{Computed: t.PromptN, Cached: t.CacheN, Prompt: seconds(t.PromptMs / 1e3)}
			}
		}
		if err != nil {
			break
		}
	}
	switch {
	case !done && o.CompletionTokens == 0:
		o.Err, o.MidStream = "stream cut before its end", len(o.Chunks) > 0
	case len(o.Chunks) == 0:
		// Nothing to time a first token or a step by: a model whose tokens show no text (a
		// random-weight one's greedy output can repeat a token of part of a character, which
		// llama-server holds back).
		o.Err = fmt.Sprintf("the reply carried no text (%d tokens by its usage)", o.CompletionTokens)
	}
}

// errorMessage is an error body's message, or the body itself.
func errorMessage(b []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil {
		if e.Error.Message != "" {
			return e.Error.Message
		}
		if e.Message != "" {
			return e.Message
		}
	}
	return string(b)
}
