// Package wire names the HTTP headers agentsim speaks beyond the OpenAI API, once for every
// package that writes or reads them: the harness and the simulator it embeds (which share a
// clock), the simulator and any client, and the recording proxy and the harness it records.
// A header is spelled here and nowhere else; the packages import this one, which imports
// nothing.
package wire

// SpeedupHeader is the response header in which an agentsim server advertises its clock's
// speedup (simulated seconds per wall second, a decimal number from 1 to 1000000), on every
// response. A client that finds it runs its own clock at the same speed, so that its timeouts
// and think times agree with the server's; any other server is taken to run at speedup 1.
const SpeedupHeader = "X-Agentsim-Speedup"

// SentAtHeader is the request header in which a client that shares the server's clock — the
// harness with its embedded simulator — says when, in simulated time (Unix nanoseconds), it
// sent the request. The simulator counts the time from then until its handler starts in its
// own lag (docs/engine.md, "The simulator's own lag").
const SentAtHeader = "Agentsim-Sent-At"

// RequestIDHeader is the request header in which the harness tells its embedded simulator its
// own id for the request (events.jsonl's request), under which the simulator keeps that
// request's own lag while it is open, so that the run judges each request's silences net of
// its own lateness (docs/verdicts.md).
const RequestIDHeader = "Agentsim-Request-Id"

// ClientRequestIDHeader is the request header in which any client may name its request; the
// simulator's access log repeats a short, plain one instead of an id of its own, as the
// gateways it imitates do.
const ClientRequestIDHeader = "X-Request-Id"

// SessionIDHeader and AgentIDHeader are the request headers in which a harness being recorded
// names the session, or the agent, a request belongs to; the recording proxy groups requests
// into sessions by the first of them present, then by the request's user field.
const (
	SessionIDHeader = "X-Session-ID"
	AgentIDHeader   = "X-Agent-ID"
)
