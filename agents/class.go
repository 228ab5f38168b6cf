package agents

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/sashabaranov/go-openai"
)

// Class names how a call failed. The values are the exact strings events.jsonl records.
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
	// ClassTimeoutRequest: the whole-request timeout fired.
	ClassTimeoutRequest Class = "timeout_request"
	// ClassTimeoutTTFT: no token arrived within the TTFT timeout.
	ClassTimeoutTTFT Class = "timeout_ttft"
	// ClassTimeoutIdle: the stream was silent for the idle timeout.
	ClassTimeoutIdle Class = "timeout_idle"
	// ClassCancelled: the caller's context ended the call (e.g. the run is stopping).
	ClassCancelled Class = "cancelled"
	// ClassOther: a failure none of the above describes, such as a request the client
	// refused to build.
	ClassOther Class = "other"
)

// Timeout reports whether c is one of the timeout classes.
func (c Class) Timeout() bool {
	return c == ClassTimeoutRequest || c == ClassTimeoutTTFT || c == ClassTimeoutIdle
}

// TimeoutKind says which of the call's timeouts fired.
type TimeoutKind string

// The timeout kinds, matching the fields of workloads.Timeouts.
const (
	// NoTimeout: no timeout fired.
	NoTimeout TimeoutKind = ""
	// TimeoutRequest: workloads.Timeouts.Request, the whole request.
	TimeoutRequest TimeoutKind = "request"
	// TimeoutTTFT: workloads.Timeouts.TTFT, send to first token.
	TimeoutTTFT TimeoutKind = "ttft"
	// TimeoutIdle: workloads.Timeouts.Idle, silence between data frames.
	TimeoutIdle TimeoutKind = "idle"
)

var (
	// ErrRequestTimeout is wrapped by Result.Err when the whole-request timeout fired.
	ErrRequestTimeout = errors.New("request timeout")
	// ErrTTFTTimeout is wrapped by Result.Err when no token arrived within the TTFT timeout.
	ErrTTFTTimeout = errors.New("ttft timeout")
	// ErrIdleTimeout is wrapped by Result.Err when the stream was silent for the idle timeout.
	ErrIdleTimeout = errors.New("idle timeout")
	// errNotEventStream reports a 200 response that ended without any data frame and was not
	// text/event-stream (a router answering with plain JSON, for example).
	errNotEventStream = errors.New("response is not an event stream")
)

// classify names a transport or protocol failure from its type, never its text. streaming
// tells whether the 2xx response headers had arrived: an *openai.APIError is then an error
// frame, and an early EOF a truncated stream rather than a dropped connection. Timeouts and
// cancellation are decided from the contexts before this is called.
func classify(err error, streaming bool) Class {
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &apiErr):
		if streaming {
			return ClassErrorFrame
		}
		return ClassHTTPStatus
	case errors.As(err, &reqErr): // non-JSON error body, e.g. an HTML 502 page
		return ClassHTTPStatus
	case errors.As(err, &synErr), errors.As(err, &typErr),
		errors.Is(err, errNotEventStream), errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return ClassMalformedSSE
	case isConnectFailure(err):
		return ClassConnect
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if streaming {
			return ClassTruncated
		}
		return ClassReset // the server closed the connection without answering
	case isNetFailure(err):
		return ClassReset
	}
	return ClassOther
}

// isConnectFailure reports a connection that was never established.
func isConnectFailure(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr) ||
		(errors.As(err, &opErr) && opErr.Op == "dial")
}

// isNetFailure reports an established connection that broke.
func isNetFailure(err error) bool {
	var netErr net.Error
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) || errors.As(err, &netErr)
}
