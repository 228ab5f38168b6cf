package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

func TestClassify(t *testing.T) {
	post := func(err error) error { return &url.Error{Op: "Post", URL: "http://x/v1/chat/completions", Err: err} }
	var syntaxErr error = json.Unmarshal([]byte("{"), new(any))
	for _, tc := range []struct {
		name      string
		err       error
		streaming bool
		want      events.Class
	}{
		{"status before the stream", &openai.APIError{HTTPStatusCode: 429, Message: "slow down"}, false, events.ClassHTTPStatus},
		{"error frame as go-openai wraps it", fmt.Errorf("error, %w", &openai.APIError{Message: "queue full"}), true, events.ClassErrorFrame},
		// An HTML 502 page: go-openai's RequestError wraps the JSON syntax error of the body;
		// it is an HTTP status failure, not a malformed stream.
		{"non-JSON error body", &openai.RequestError{HTTPStatusCode: 502, Err: syntaxErr}, false, events.ClassHTTPStatus},
		{"refused", post(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), false, events.ClassConnect},
		{"dial timeout", post(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}), false, events.ClassConnect},
		{"unknown host", post(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x"}}), false, events.ClassConnect},
		{"reset mid-stream", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true, events.ClassReset},
		{"broken pipe while sending", post(&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}), false, events.ClassReset},
		{"closed before any response", post(io.EOF), false, events.ClassReset},
		{"chunked body cut", io.ErrUnexpectedEOF, true, events.ClassTruncated},
		{"ended before [DONE]", fmt.Errorf("stream ended: %w", io.ErrUnexpectedEOF), true, events.ClassTruncated},
		{"bad data line", fmt.Errorf("data line: %w", syntaxErr), true, events.ClassMalformedSSE},
		{"wrong field type", &json.UnmarshalTypeError{Value: "number", Field: "choices.0.delta.content"}, true, events.ClassMalformedSSE},
		{"not an event stream", fmt.Errorf("%w (Content-Type %q)", errNotEventStream, "application/json"), true, events.ClassMalformedSSE},
		{"endless comments", openai.ErrTooManyEmptyStreamMessages, true, events.ClassMalformedSSE},
		{"client-side refusal", openai.ErrChatCompletionInvalidModel, false, events.ClassOther},
	} {
		assert.Equal(t, tc.want, classify(tc.err, tc.streaming), "%s: classify(%v, streaming=%t)", tc.name, tc.err, tc.streaming)
	}
}

func TestRetryable(t *testing.T) {
	token := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	frame := func(code any) error { return fmt.Errorf("error, %w", &openai.APIError{Code: code, Message: "x"}) }
	for _, tc := range []struct {
		name string
		res  Result
		want bool
	}{
		{"429", Result{Class: events.ClassHTTPStatus, Status: 429}, true},
		{"408", Result{Class: events.ClassHTTPStatus, Status: 408}, true},
		{"503", Result{Class: events.ClassHTTPStatus, Status: 503}, true},
		{"400", Result{Class: events.ClassHTTPStatus, Status: 400}, false},
		{"404", Result{Class: events.ClassHTTPStatus, Status: 404}, false},
		{"connect", Result{Class: events.ClassConnect}, true},
		{"reset", Result{Class: events.ClassReset, Status: 200}, true},
		{"frame before tokens", Result{Class: events.ClassErrorFrame, Err: frame(503)}, true},
		{"frame before tokens, string code", Result{Class: events.ClassErrorFrame, Err: frame("503")}, true},
		{"frame before tokens, no code", Result{Class: events.ClassErrorFrame, Err: frame(nil)}, true},
		{"frame before tokens, 400", Result{Class: events.ClassErrorFrame, Err: frame(400)}, false},
		{"frame before tokens, 429", Result{Class: events.ClassErrorFrame, Err: frame(429)}, true},
		{"frame after reasoning", Result{Class: events.ClassErrorFrame, Err: frame(503), FirstReasoning: token}, false},
		{"frame after content", Result{Class: events.ClassErrorFrame, Err: frame(503), FirstContent: token}, false},
		{"truncated", Result{Class: events.ClassTruncated}, false},
		{"malformed", Result{Class: events.ClassMalformedSSE}, false},
		{"idle timeout", Result{Class: events.ClassTimeoutIdle}, false},
		{"cancelled", Result{Class: events.ClassCancelled}, false},
		{"success", Result{}, false},
	} {
		assert.Equal(t, tc.want, tc.res.Retryable(), "%s: %+v.Retryable()", tc.name, tc.res)
	}
}

func TestOutcome(t *testing.T) {
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := Result{Sent: sent, End: sent.Add(90 * time.Second), Usage: Usage{Prompt: 100, Completion: 40}}
	for _, tc := range []struct {
		class events.Class
		kind  TimeoutKind
		want  events.RequestOutcome // as the pacer learns it and the release event records it
	}{
		{events.ClassNone, NoTimeout, events.RequestSuccess},
		{events.ClassTimeoutIdle, TimeoutIdle, events.RequestTimeout},
		{events.ClassTimeoutTTFT, TimeoutTTFT, events.RequestTimeout},
		{events.ClassTimeoutRequest, TimeoutRequest, events.RequestTimeout},
		{events.ClassCancelled, NoTimeout, events.RequestCancelled},
		{events.ClassReset, NoTimeout, events.RequestError},
	} {
		r := base
		r.Class, r.Timeout = tc.class, tc.kind
		o := r.Outcome()
		assert.Equal(t, tc.want, o.Kind, "Result{Class: %q}.Outcome().Kind", tc.class)
		assert.Equal(t, 90*time.Second, o.Latency)
		assert.Equal(t, 100, o.PromptTokens)
		assert.Equal(t, 40, o.OutputTokens)
		assert.Equal(t, tc.kind != NoTimeout, tc.class.Timeout(), "%q.Timeout()", tc.class)
	}
}

func TestFirstToken(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := Result{}
	assert.True(t, r.FirstToken().IsZero())
	r.FirstContent = t0.Add(5 * time.Second)
	assert.Equal(t, r.FirstContent, r.FirstToken(), "content only")
	r.FirstReasoning = t0.Add(2 * time.Second)
	assert.Equal(t, r.FirstReasoning, r.FirstToken(), "reasoning first")
	assert.True(t, r.GotToken())
}
