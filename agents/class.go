package agents

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
)

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
func classify(err error, streaming bool) events.Class {
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, ErrMalformedToolCall):
		return events.ClassMalformedToolCall
	case errors.Is(err, events.ErrStreamLineTooLong):
		return events.ClassLineTooLong
	case errors.As(err, &apiErr):
		if streaming {
			return events.ClassErrorFrame
		}
		return events.ClassHTTPStatus
	case errors.As(err, &reqErr): // non-JSON error body, e.g. an HTML 502 page
		return events.ClassHTTPStatus
	case errors.As(err, &synErr), errors.As(err, &typErr),
		errors.Is(err, errNotEventStream), errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return events.ClassMalformedSSE
	case isConnectFailure(err):
		return events.ClassConnect
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if streaming {
			return events.ClassTruncated
		}
		return events.ClassReset // the server closed the connection without answering
	case isNetFailure(err):
		return events.ClassReset
	}
	return events.ClassOther
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
