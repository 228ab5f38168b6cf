// Package keepalive resends a request that failed on a kept-alive connection the server
// had closed: the race in which a server drops a connection it holds idle (its keep-alive
// timeout) just as the client sends the next request on it, so the request meets an end of
// file or a reset before any byte of a response.
//
// net/http's Transport resends such a request itself only when it may replay it: a GET, HEAD,
// OPTIONS or TRACE, or any request with a GetBody and an Idempotency-Key or
// X-Idempotency-Key header ((*http.Request).isReplayable); and a request of which it wrote
// nothing at all, when it has a GetBody. A chat completion is a POST without such a header,
// so a real client meets the race as a failed request: a few in a hundred against a server
// whose keep-alive timeout is shorter than the agents' think time (llama-server's is 5 s).
// The server never saw such a request begin, so sending it again is what the client means;
// the agents (package agents) and the recording proxy (internal/record) do so through
// RoundTrip, on another connection each time, until an attempt is answered or goes on a new
// connection (MaxResends at most), and the request succeeds or fails by what the server does
// with that one.
package keepalive

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// Attempt is what a request's round trip saw of its connection: whether it went on a reused
// one, and whether a byte of the response came back. Watch makes one.
type Attempt struct {
	reused   atomic.Bool
	answered atomic.Bool
	onReused func()
}

// Watch returns ctx carrying a client trace that fills a new Attempt for the request sent
// under it. onReused, when not nil, is called when the request is given a reused connection,
// before its body is written: a body that lets go of its bytes once sent keeps them then,
// for a resend, until the round trip returns. A transport that reports no connections (an
// in-process one, internal/inproc) never reuses one, so its requests are never resent.
func Watch(ctx context.Context, onReused func()) (context.Context, *Attempt) {
	a := &Attempt{onReused: onReused}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: a.gotConn, GotFirstResponseByte: a.firstByte}), a
}

// gotConn notes the connection the request is written on; net/http may give a request more
// than one (its own resends), and the last is the one that failed.
func (a *Attempt) gotConn(info httptrace.GotConnInfo) {
	a.reused.Store(info.Reused)
	if info.Reused && a.onReused != nil {
		a.onReused()
	}
}

// firstByte notes that the response began.
func (a *Attempt) firstByte() { a.answered.Store(true) }

// Lost reports whether err, from a round trip of a request sent under ctx (Watch's context),
// is the kept-alive race: the request went on a reused connection and failed before any byte
// of a response, neither by ctx's end nor by a timeout (which a resend would only prolong).
func (a *Attempt) Lost(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || !a.reused.Load() || a.answered.Load() {
		return false
	}
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// MaxResends bounds how many times one request is sent again. Each resend goes on another
// pooled connection, the failed one being gone from the pool, or on a new one, which ends the
// resends: a server that closed every idle connection at once (its keep-alive timeout passing
// during the agents' think time) leaves as many dead connections in the pool as it had idle,
// and a request meets them in turn.
const MaxResends = 16

// RoundTrip sends req through next and, while it is lost to the kept-alive race (Lost), sends
// it again with its body from req.GetBody, at most MaxResends times. req's context must come
// from Watch, giving a. A request with a body and no GetBody, or whose GetBody fails, is not
// resent, and its last error is returned.
func RoundTrip(next http.RoundTripper, req *http.Request, a *Attempt) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	for range MaxResends {
		if !a.Lost(req.Context(), err) {
			break
		}
		again := *req // a shallow copy: the request's own fields are not to be changed
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			again.Body = body
		}
		a.reused.Store(false) // the next attempt's connection says again
		resp, err = next.RoundTrip(&again)
	}
	return resp, err
}

// Transport is an http.RoundTripper that sends every request through Next by RoundTrip:
// resent once when lost to the kept-alive race, with its body from GetBody. Requests net/http
// resends itself (those without a body, GETs) and those it could not resend (a body without
// GetBody) pass through as they are.
type Transport struct {
	// Next sends the requests.
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody == nil || req.Method == http.MethodGet {
		return t.Next.RoundTrip(req)
	}
	ctx, a := Watch(req.Context(), nil)
	return RoundTrip(t.Next, req.WithContext(ctx), a)
}

// CloseIdleConnections closes Next's idle connections, when it keeps any, so that an
// http.Client over a Transport closes them as it would over Next.
func (t Transport) CloseIdleConnections() {
	if c, ok := t.Next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
