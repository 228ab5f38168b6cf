package simserver

import (
	"net/http"
	"strconv"
	"time"
)

// SentAtHeader is the request header in which a client that shares the server's clock — the
// harness of `agentsim run` with its embedded simulator — says when, in simulated time
// (Unix nanoseconds), it sent the request. The time until the handler starts is then the
// simulator's own lag too (docs/engine.md, "The simulator's own lag"): at a speedup the
// machine cannot keep up with, a request can spend simulated seconds between the client's
// send and the server's handler.
const SentAtHeader = "Agentsim-Sent-At"

// RequestIDHeader is the request header in which the harness of `agentsim run` tells its
// embedded simulator its own id for the request (events.jsonl's request), under which the
// engine keeps that request's own lag while it is open (engine.Engine.RequestLag): the run
// judges each request's silences net of its own lateness, not of other requests'
// (docs/verdicts.md).
const RequestIDHeader = "Agentsim-Request-Id"

// sentAt returns when the request was sent by its SentAtHeader, or start (when its handler
// started) when the header is absent, unreadable or later than start.
func sentAt(h http.Header, start time.Time) time.Time {
	v := h.Get(SentAtHeader)
	if v == "" {
		return start
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return start
	}
	if t := time.Unix(0, ns); t.Before(start) {
		return t
	}
	return start
}
