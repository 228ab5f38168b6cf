package harness

import (
	"net/http"
	"strconv"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/agents"
)

// sentAtHeader is simserver.SentAtHeader: the harness tells its embedded simulator, which
// shares its clock, when it sent each request, so that the simulator counts the time until
// its handler starts in its own lag (docs/engine.md).
const sentAtHeader = "Agentsim-Sent-At"

// requestIDHeader is simserver.RequestIDHeader: the harness tells its embedded simulator its
// id for each request, under which the simulator keeps the request's own lag (SimLag.RequestLag).
const requestIDHeader = "Agentsim-Request-Id"

// requestClient returns the HTTP client the agents send their requests with: Options'
// client, stamping each request with its send time when the target is the embedded
// simulator (Target.SimLag set).
func (r *run) requestClient() *http.Client {
	if r.o.Target.SimLag == nil {
		return r.o.HTTPClient
	}
	var c http.Client
	if r.o.HTTPClient != nil {
		c = *r.o.HTTPClient
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = sentAtTransport{next: next, clk: r.o.Clock}
	return &c
}

// sentAtTransport adds sentAtHeader to every request and requestIDHeader to an agent's. The
// send time is the request_sent event's for an agent's request — where the silence the
// verdict judges begins: a process too slow for its speedup can take simulated seconds from
// there to the transport, and that is agentsim's own lag, not the modelled server's — and the
// simulated time now for any other.
type sentAtTransport struct {
	next http.RoundTripper
	clk  *clock.Clock
}

// RoundTrip stamps a copy of req and sends it. The copy is shallow but for the header map,
// whose values it shares: the request stays referenced by its response for as long as the
// stream lasts, and a deep Clone would keep a second URL and every header value per stream.
func (t sentAtTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	id, sent := agents.SentRequest(req.Context())
	if sent.IsZero() {
		sent = t.clk.Now()
	}
	h := make(http.Header, len(req.Header)+2)
	for k, v := range req.Header {
		h[k] = v
	}
	h[sentAtHeader] = []string{strconv.FormatInt(sent.UnixNano(), 10)}
	if id != "" {
		h[requestIDHeader] = []string{id}
	}
	out := req.WithContext(req.Context())
	out.Header = h
	return t.next.RoundTrip(out)
}
