package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// failCase is a server misbehaving one way and what the Result must say about it.
type failCase struct {
	name      string
	s         *script
	timeouts  workloads.Timeouts
	class     events.Class
	status    int
	timeout   TimeoutKind
	end       time.Duration // when the call must end (simulated, since Sent); -1: don't check
	retry     bool          // Retryable()
	retryAt   time.Duration // RetryAfter
	check     func(t *testing.T, res Result)
	wantError any // a pointer to a type errors.As must find in Err
}

const queueFull = `{"error":{"message":"The request queue is full.","type":"server_error","param":null,"code":503}}`

func failCases() []failCase {
	s, ms := time.Second, time.Millisecond
	tokens := []step{{data: roleFrame()}, {after: s, data: contentFrame("Hi")}}
	then := func(more ...step) []step { return append(append([]step(nil), tokens...), more...) }
	return []failCase{
		{name: "429 with Retry-After in seconds",
			s:     &script{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"slow down","type":"rate_limit"}}`},
			class: events.ClassHTTPStatus, status: 429, retry: true, retryAt: 7 * s, end: 0, wantError: new(*openai.APIError)},
		{name: "429 with Retry-After as an HTTP-date",
			s: &script{status: 429, body: `{"error":{"message":"slow down"}}`, header: map[string]string{
				"Date": "Mon, 02 Jan 2006 15:04:05 GMT", "Retry-After": "Mon, 02 Jan 2006 15:04:35 GMT"}},
			class: events.ClassHTTPStatus, status: 429, retry: true, retryAt: 30 * s, end: 0},
		{name: "503 with a JSON body, after 2 s in the queue",
			s:     &script{headerDelay: 2 * s, status: 503, body: queueFull, header: map[string]string{"Retry-After": "5"}},
			class: events.ClassHTTPStatus, status: 503, retry: true, retryAt: 5 * s, end: 2 * s,
			check: func(t *testing.T, res Result) {
				var apiErr *openai.APIError
				if assert.ErrorAs(t, res.Err, &apiErr) {
					assert.Equal(t, "The request queue is full.", apiErr.Message)
					assert.Equal(t, 503, apiErr.HTTPStatusCode)
				}
				near(t, 2*time.Second, res.Headers.Sub(res.Sent), "Headers")
			}},
		{name: "502 HTML page from a proxy",
			s:     &script{status: 502, contentType: "text/html", body: "<html><body><h1>502 Bad Gateway</h1></body></html>"},
			class: events.ClassHTTPStatus, status: 502, retry: true, end: 0, wantError: new(*openai.RequestError)},
		{name: "400 is not retryable",
			s:     &script{status: 400, body: `{"object":"error","message":"context too long","type":"BadRequestError","code":400}`},
			class: events.ClassHTTPStatus, status: 400, retry: false, end: 0},
		{name: "error frame after tokens",
			s:     &script{steps: then(step{data: queueFull})},
			class: events.ClassErrorFrame, status: 200, retry: false, end: s, wantError: new(*openai.APIError),
			check: func(t *testing.T, res Result) { assert.Equal(t, "Hi", res.Content) }},
		{name: "error frame before any token",
			s:     &script{steps: []step{{data: roleFrame()}, {after: s, data: queueFull}}},
			class: events.ClassErrorFrame, status: 200, retry: true, end: s},
		{name: "error frame with a 400 code before any token",
			s:     &script{steps: []step{{data: `{"error":{"message":"bad","code":400}}`}}},
			class: events.ClassErrorFrame, status: 200, retry: false, end: 0},
		{name: "older object:error frame",
			s:     &script{steps: then(step{data: `{"object":"error","message":"boom","type":"InternalServerError","code":500}`})},
			class: events.ClassErrorFrame, status: 200, end: s, wantError: new(*openai.APIError),
			check: func(t *testing.T, res Result) {
				var apiErr *openai.APIError
				if assert.ErrorAs(t, res.Err, &apiErr) {
					assert.Equal(t, "boom", apiErr.Message)
				}
			}},
		{name: "connection cut mid-stream",
			s:     &script{steps: then(step{after: s, cut: true})},
			class: events.ClassTruncated, status: 200, end: 2 * s},
		{name: "stream ends cleanly without [DONE]",
			s:     &script{steps: then(step{data: finishFrame("stop")})},
			class: events.ClassTruncated, status: 200, end: s,
			check: func(t *testing.T, res Result) { assert.Equal(t, 3, res.Chunks) }},
		{name: "connection reset mid-stream",
			s:     &script{steps: then(step{after: s, reset: true})},
			class: events.ClassReset, status: 200, retry: true, end: 2 * s},
		{name: "malformed data line",
			s:     &script{steps: then(step{data: `{"choices":[{"delta":{"content":"x"}}`})},
			class: events.ClassMalformedSSE, status: 200, end: s, wantError: new(*json.SyntaxError)},
		{name: "content of the wrong type",
			s:     &script{steps: then(step{data: `{"choices":[{"delta":{"content":5}}]}`})},
			class: events.ClassMalformedSSE, status: 200, end: s, wantError: new(*json.UnmarshalTypeError)},
		// A peer cannot make the reader hold more than the bound: a line without its end, or
		// non-data lines that together pass it.
		{name: "a line longer than the bound",
			s:     &script{steps: then(step{raw: "data: " + strings.Repeat("x", events.MaxStreamLineBytes+sseBufferBytes)}, step{hang: true})},
			class: events.ClassLineTooLong, status: 200, end: s,
			check: func(t *testing.T, res Result) { assert.ErrorIs(t, res.Err, events.ErrStreamLineTooLong) }},
		{name: "non-data lines longer than the bound together",
			s:     &script{steps: then(step{raw: strings.Repeat(": "+strings.Repeat("x", 1<<20)+"\n", 9)}, step{hang: true})},
			class: events.ClassLineTooLong, status: 200, end: s},
		{name: "200 with a JSON body instead of an event stream",
			s:     &script{contentType: "application/json", body: `{"id":"x","choices":[{"message":{"content":"hi"}}]}`},
			class: events.ClassMalformedSSE, status: 200, end: 0},
		{name: "silent stream trips the idle timeout exactly Idle after the last chunk",
			s:        &script{steps: then(step{after: 500 * ms, data: contentFrame("!")}, step{hang: true})},
			timeouts: workloads.Timeouts{Idle: 10 * s, TTFT: 3 * s},
			class:    events.ClassTimeoutIdle, timeout: TimeoutIdle, status: 200, end: 11500 * ms,
			check: func(t *testing.T, res Result) {
				near(t, 10*time.Second, res.End.Sub(res.Last), "silence at the end")
				near(t, time.Second, res.MaxGap, "MaxGap")
				assert.ErrorIs(t, res.Err, ErrIdleTimeout)
				assert.Equal(t, events.RequestTimeout, res.Outcome().Kind)
			}},
		{name: "keep-alive comments do not reset the idle timeout",
			s: &script{steps: then(step{after: 2 * s, raw: ": ping\n\n"}, step{after: 2 * s, raw: ": ping\n\n"},
				step{after: 2 * s, raw: ": ping\n\n"}, step{hang: true})},
			timeouts: workloads.Timeouts{Idle: 5 * s},
			class:    events.ClassTimeoutIdle, timeout: TimeoutIdle, status: 200, end: 6 * s},
		{name: "no first token trips TTFT, though chunks arrive",
			s:        &script{steps: []step{{data: roleFrame()}, {after: s, data: roleFrame()}, {hang: true}}},
			timeouts: workloads.Timeouts{TTFT: 5 * s, Idle: 30 * s},
			class:    events.ClassTimeoutTTFT, timeout: TimeoutTTFT, status: 200, end: 5 * s,
			check: func(t *testing.T, res Result) { assert.ErrorIs(t, res.Err, ErrTTFTTimeout) }},
		{name: "no headers at all trips TTFT",
			s:        &script{headerDelay: time.Hour},
			timeouts: workloads.Timeouts{TTFT: 5 * s, Idle: 1 * s},
			class:    events.ClassTimeoutTTFT, timeout: TimeoutTTFT, status: 0, end: 5 * s},
		{name: "idle shorter than TTFT applies from the first chunk",
			s:        &script{steps: []step{{after: s, data: roleFrame()}, {hang: true}}},
			timeouts: workloads.Timeouts{TTFT: 60 * s, Idle: 5 * s},
			class:    events.ClassTimeoutIdle, timeout: TimeoutIdle, status: 200, end: 6 * s},
		{name: "a stream dripping just inside Idle, then silent, times out exactly Idle after its last chunk",
			s:        &script{steps: append(slowTokens(50, 900*ms)[:51], step{hang: true})},
			timeouts: workloads.Timeouts{Idle: s},
			class:    events.ClassTimeoutIdle, timeout: TimeoutIdle, status: 200, end: 46 * s,
			check: func(t *testing.T, res Result) {
				near(t, time.Second, res.End.Sub(res.Last), "silence at the end")
				assert.Equal(t, 51, res.Chunks)
			}},
		{name: "the whole-request timeout alone ends a request that never gets its headers",
			s:        &script{headerDelay: time.Hour},
			timeouts: workloads.Timeouts{Request: 10 * s},
			class:    events.ClassTimeoutRequest, timeout: TimeoutRequest, status: 0, end: 10 * s,
			check: func(t *testing.T, res Result) { assert.ErrorIs(t, res.Err, ErrRequestTimeout) }},
		{name: "a whole-request timeout shorter than TTFT fires first",
			s:        &script{steps: []step{{data: roleFrame()}, {hang: true}}},
			timeouts: workloads.Timeouts{Request: 3 * s, TTFT: 5 * s, Idle: 4 * s},
			class:    events.ClassTimeoutRequest, timeout: TimeoutRequest, status: 200, end: 3 * s},
		{name: "slow steady stream trips the whole-request timeout",
			s:        &script{steps: slowTokens(100, 700*ms)},
			timeouts: workloads.Timeouts{Request: 30 * s, Idle: 5 * s, TTFT: 5 * s},
			class:    events.ClassTimeoutRequest, timeout: TimeoutRequest, status: 200, end: 30 * s,
			check: func(t *testing.T, res Result) {
				assert.ErrorIs(t, res.Err, ErrRequestTimeout)
				near(t, 700*time.Millisecond, res.MaxGap, "MaxGap")
			}},
	}
}

// slowTokens is n content tokens, one every gap.
func slowTokens(n int, gap time.Duration) []step {
	steps := []step{{data: roleFrame()}}
	for range n {
		steps = append(steps, step{after: gap, data: contentFrame("t")})
	}
	return append(steps, step{raw: doneRaw})
}

// TestCallFailureClasses: each way a server can fail a request yields its class, status,
// retryability and end time, in exact simulated time — at --speedup 20 too.
func TestCallFailureClasses(t *testing.T) {
	for _, speedup := range []float64{1, 20} {
		for _, tc := range failCases() {
			t.Run(fmt.Sprintf("speedup=%v/%s", speedup, tc.name), func(t *testing.T) {
				runFailCase(t, speedup, tc)
			})
		}
	}
}

// runFailCase plays tc's server in a bubble at the given speedup and checks the Result.
func runFailCase(t *testing.T, speedup float64, tc failCase) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(speedup)
		require.NoError(t, err)
		tc.s.clk = clk
		env := newTestEnv(t, clk, tc.s)
		defer env.close()
		req := testRequest()
		req.Timeouts = tc.timeouts
		res := env.client.Call(t.Context(), req, nil)
		assertFailure(t, &tc, res)
	})
}

// near asserts got is want within a microsecond: float scaling at a speedup may cost
// nanoseconds.
func near(t *testing.T, want, got time.Duration, what string) {
	t.Helper()
	assert.InDelta(t, want, got, float64(time.Microsecond), "%s = %v; want %v", what, got, want)
}

// assertFailure checks res against tc.
func assertFailure(t *testing.T, tc *failCase, res Result) {
	t.Helper()
	assert.Error(t, res.Err)
	assert.Equal(t, tc.class, res.Class, "Class; Err = %v", res.Err)
	assert.Equal(t, tc.status, res.Status, "Status")
	assert.Equal(t, tc.timeout, res.Timeout, "Timeout")
	assert.Equal(t, tc.retry, res.Retryable(), "Retryable() with Class %s, Status %d", res.Class, res.Status)
	assert.Equal(t, tc.retryAt, res.RetryAfter, "RetryAfter")
	if tc.end >= 0 {
		near(t, tc.end, res.End.Sub(res.Sent), "End - Sent")
	}
	if tc.wantError != nil {
		assert.ErrorAs(t, res.Err, tc.wantError)
	}
	if tc.check != nil {
		tc.check(t, res)
	}
}

// TestCallConnectRefused: a server that is not there yields events.ClassConnect, retryable.
func TestCallConnectRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		env := newTestEnv(t, clk, http.NotFoundHandler())
		env.close() // the listener is closed: dials are refused
		res := env.client.Call(t.Context(), testRequest(), nil)
		assert.Equal(t, events.ClassConnect, res.Class, "Err = %v", res.Err)
		assert.True(t, res.Retryable())
		assert.Zero(t, res.Status)
		assert.Equal(t, events.RequestError, res.Outcome().Kind)
	})
}

// TestCallServerClosesBeforeAnswering: a connection closed before any response is a reset.
func TestCallServerClosesBeforeAnswering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		env := newTestEnv(t, clk, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		defer env.close()
		res := env.client.Call(t.Context(), testRequest(), nil)
		assert.Equal(t, events.ClassReset, res.Class, "Err = %v", res.Err)
		assert.True(t, res.Retryable())
		assert.False(t, errors.Is(res.Err, ErrIdleTimeout))
	})
}
