package events

import "fmt"

// Class names how a request failed: the `class` field of a terminal event (and of the
// round_done event of a failed round). The harness's agents and the recording proxy both
// classify into it, from typed errors and from what the proxy saw of the response.
type Class string

// The failure classes. ClassNone is a success.
const (
	// ClassNone: the stream completed with [DONE].
	ClassNone Class = ""
	// ClassHTTPStatus: a non-2xx status before the stream (JSON error body or not).
	ClassHTTPStatus Class = "http_status"
	// ClassErrorFrame: an error frame inside a 200 stream (data: {"error":…}).
	ClassErrorFrame Class = "error_frame"
	// ClassConnect: no connection could be made (refused, DNS, dial failure).
	ClassConnect Class = "connect"
	// ClassReset: the connection broke (reset, or closed before any response).
	ClassReset Class = "reset"
	// ClassTruncated: the stream ended before data: [DONE].
	ClassTruncated Class = "truncated"
	// ClassMalformedSSE: a data line that is not a JSON chunk, or a 200 that is not SSE.
	ClassMalformedSSE Class = "malformed_sse"
	// ClassMalformedToolCall: a complete reply whose tool calls cannot be assembled (a call
	// without an id or a name, two calls of one id, arguments that are not JSON): a harness
	// cannot run them, nor answer them with tool messages.
	ClassMalformedToolCall Class = "malformed_tool_call"
	// ClassTimeoutRequest: the whole-request timeout fired.
	ClassTimeoutRequest Class = "timeout_request"
	// ClassTimeoutTTFT: no token arrived within the TTFT timeout.
	ClassTimeoutTTFT Class = "timeout_ttft"
	// ClassTimeoutIdle: the stream was silent for the idle timeout.
	ClassTimeoutIdle Class = "timeout_idle"
	// ClassCancelled: the harness ended the request itself (the run is stopping, or a
	// recorded harness closed it before its end).
	ClassCancelled Class = "cancelled"
	// ClassLineTooLong: a line of the stream (or the error text around it) longer than
	// MaxStreamLineBytes; the reader stops there rather than hold what a peer sends.
	ClassLineTooLong Class = "line_too_long"
	// ClassOther: a failure none of the above describes, such as a request the client
	// refused to build.
	ClassOther Class = "other"
)

// MaxStreamLineBytes bounds one line of an event stream, in bytes, for every reader of one
// (the agents' client, which bench and replay use, and the recording proxy with its watch):
// 8 MiB, thousands of times a chunk frame (200–400 bytes) and more than a whole long reply
// sent in one frame. A longer line fails the request as ClassLineTooLong.
const MaxStreamLineBytes = 8 << 20

// ErrStreamLineTooLong is the error of a reader that met a line longer than
// MaxStreamLineBytes; the request's class is ClassLineTooLong.
var ErrStreamLineTooLong = fmt.Errorf("a line of the event stream is longer than %d MiB", MaxStreamLineBytes>>20)

// Timeout reports whether c is one of the timeout classes.
func (c Class) Timeout() bool {
	return c == ClassTimeoutRequest || c == ClassTimeoutTTFT || c == ClassTimeoutIdle
}

// Outcome is how a request that failed with class c ended: a success for ClassNone, a timeout
// for the timeout classes, cancelled for ClassCancelled, and an error for every other class.
func (c Class) Outcome() RequestOutcome {
	switch {
	case c == ClassNone:
		return RequestSuccess
	case c.Timeout():
		return RequestTimeout
	case c == ClassCancelled:
		return RequestCancelled
	}
	return RequestError
}
