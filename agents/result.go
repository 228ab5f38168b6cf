package agents

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/pacer"
)

// Result is everything one streaming call measured. Failures are data: a failed call is a
// Result with Err, Class and the timings up to the failure. Every time is simulated time read
// from the call's *clock.Clock; a zero time means the event did not happen.
type Result struct {
	// Sent is when the request was handed to the HTTP client.
	Sent time.Time
	// Headers is when the response headers arrived (any status).
	Headers time.Time
	// FirstReasoning and FirstContent are when the first non-empty reasoning and content
	// deltas arrived.
	FirstReasoning time.Time
	FirstContent   time.Time
	// FirstToolCall is when the first tool-call delta arrived.
	FirstToolCall time.Time
	// Last is when the last data frame (the [DONE] terminator included) arrived.
	Last time.Time
	// End is when the call ended, successfully or not.
	End time.Time

	// TTFT is Sent to the first token of any kind (reasoning, content or a tool call);
	// TTFTContent is Sent to the first content token. Zero when no such token arrived. For a reasoning model TTFT is the first
	// reasoning token and TTFTContent comes when thinking ends.
	TTFT        time.Duration
	TTFTContent time.Duration
	// Chunks counts the data frames received, the [DONE] terminator included.
	Chunks int
	// TokenChunks counts the data frames among Chunks that carried a non-empty reasoning or
	// content delta or a tool-call delta: not the role frame, an empty finish frame, the usage
	// frame or [DONE].
	TokenChunks int
	// FirstTokenChunk is the number, counted from 1 among Chunks, of the data frame that
	// carried the first token of either kind; 0 when no token arrived.
	FirstTokenChunk int
	// MaxGap is the longest silence between two consecutive data frames. The silence after
	// the last frame of a failed call is End - Last.
	MaxGap time.Duration

	// ReasoningChars and ContentChars count the Unicode code points of the reasoning and
	// content deltas received.
	ReasoningChars int
	ContentChars   int
	// Content is the assistant's content text (not its reasoning), as received.
	Content string
	// Role is the role the first delta announced, usually "assistant".
	Role string
	// FinishReason is the last finish_reason received: stop, length, tool_calls, abort…
	FinishReason events.FinishReason
	// Usage is the server's token count from the final usage chunk; zero if none arrived.
	Usage Usage
	// ToolCalls are the reply's tool calls, in index order; nil when it called none or they
	// could not be assembled (ErrMalformedToolCall).
	ToolCalls []ToolCall

	// Err is why the call failed; nil on success.
	Err error
	// Class names the failure for events.jsonl; events.ClassNone on success.
	Class events.Class
	// Status is the HTTP status code, 0 when no response arrived.
	Status int
	// RetryAfter is the delay a 429 or 503 response asked for (Retry-After in seconds or as
	// an HTTP-date, or retry-after-ms), taken as simulated time; 0 when not given.
	RetryAfter time.Duration
	// Timeout says which timeout ended the call; NoTimeout otherwise.
	Timeout TimeoutKind
}

// Usage is the server-counted token usage of one request, in tokens.
type Usage struct {
	// Prompt is usage.prompt_tokens.
	Prompt int
	// Completion is usage.completion_tokens, reasoning included.
	Completion int
	// Reasoning is usage.completion_tokens_details.reasoning_tokens.
	Reasoning int
	// Cached is usage.prompt_tokens_details.cached_tokens (prefix-cache hits).
	Cached int
}

// OK reports whether the call completed: the stream reached [DONE] without an error.
func (r *Result) OK() bool { return r.Err == nil }

// GotToken reports whether any token, reasoning, content or a tool call, arrived.
func (r *Result) GotToken() bool {
	return !r.FirstReasoning.IsZero() || !r.FirstContent.IsZero() || !r.FirstToolCall.IsZero()
}

// FirstToken is when the first token of any kind arrived (Sent + TTFT); zero if none did.
func (r *Result) FirstToken() time.Time {
	var first time.Time
	for _, t := range [...]time.Time{r.FirstReasoning, r.FirstContent, r.FirstToolCall} {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// ITL is the mean gap between consecutive data frames from the one that carried the first
// token to the last one ([DONE] included), in simulated time: (Last − FirstToken) over the
// Chunks − FirstTokenChunk gaps between them. It is 0 when there is no such gap.
func (r *Result) ITL() time.Duration {
	gaps := r.Chunks - r.FirstTokenChunk
	if r.FirstTokenChunk == 0 || gaps < 1 {
		return 0
	}
	return r.Last.Sub(r.FirstToken()) / time.Duration(gaps)
}

// Latency is Sent to End, in simulated time.
func (r *Result) Latency() time.Duration { return r.End.Sub(r.Sent) }

// Retryable reports whether sending the same request again may succeed: a 408, 429 or 5xx
// status before the stream, a connection that could not be made or was reset, or an error
// frame that came before any token (with no 4xx code other than 408 and 429). Partial output,
// timeouts, truncated or malformed streams and cancellations are left to the caller's policy.
func (r *Result) Retryable() bool {
	switch r.Class {
	case events.ClassHTTPStatus:
		return retryableStatus(r.Status)
	case events.ClassConnect, events.ClassReset:
		return true
	case events.ClassErrorFrame:
		if r.GotToken() {
			return false // partial output: sending again would not continue it
		}
		var apiErr *openai.APIError
		if !errors.As(r.Err, &apiErr) {
			return true
		}
		code := frameCode(apiErr)
		return code < 400 || retryableStatus(code)
	}
	return false
}

// retryableStatus reports the HTTP statuses worth retrying: 408, 429 and 5xx.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// frameCode returns the HTTP-like status an error frame carries in its code (a number or a
// numeric string, as SGLang sends; a Responses API error code by its meaning), or 0.
func frameCode(e *openai.APIError) int {
	switch c := e.Code.(type) {
	case int:
		return c
	case string:
		n, err := strconv.Atoi(c)
		if err == nil {
			return n
		}
		return responsesCodeStatus(c)
	}
	return 0
}

// responsesCodeStatus is the HTTP status a Responses API error code (response.error.code, an
// error event's code) stands for: the server's own failures and rate limits are worth a
// retry, a prompt or image the server refused is not; 0 for a code it does not know.
func responsesCodeStatus(code string) int {
	switch {
	case code == "server_error":
		return http.StatusInternalServerError
	case code == "rate_limit_exceeded":
		return http.StatusTooManyRequests
	case code == "vector_store_timeout":
		return http.StatusGatewayTimeout
	case strings.HasPrefix(code, "invalid_") || strings.Contains(code, "image") || strings.HasSuffix(code, "_policy"):
		return http.StatusBadRequest
	}
	return 0
}

// Outcome is the pacer's view of the call, for Permit.Release: how it ended, by its Class.
func (r *Result) Outcome() pacer.Outcome {
	return pacer.Outcome{
		Kind:         r.Class.Outcome(),
		Latency:      r.Latency(),
		PromptTokens: r.Usage.Prompt,
		OutputTokens: r.Usage.Completion,
	}
}
