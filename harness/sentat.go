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

// sentAtTransport adds sentAtHeader, the simulated time now, to every request, and
// requestIDHeader to an agent's.
type sentAtTransport struct {
	next http.RoundTripper
	clk  *clock.Clock
}

// RoundTrip stamps a copy of req and sends it.
func (t sentAtTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(sentAtHeader, strconv.FormatInt(t.clk.Now().UnixNano(), 10))
	if id := agents.RequestIDOf(req.Context()); id != "" {
		req.Header.Set(requestIDHeader, id)
	}
	return t.next.RoundTrip(req)
}
