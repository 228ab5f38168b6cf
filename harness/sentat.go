package harness

import (
	"net/http"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/agents"
)

// sentAtHeader is simserver.SentAtHeader: the harness tells its embedded simulator, which
// shares its clock, when it sent each request, so that the simulator counts the time until
// its handler starts in its own lag (docs/engine.md).
const sentAtHeader = "Agentsim-Sent-At"

// requestIDHeader is simserver.RequestIDHeader: the harness tells its embedded simulator its
// id for each request, under which the simulator keeps the request's own lag (SimLag.RequestLag).
const requestIDHeader = "Agentsim-Request-Id"

// stamp returns the agents' request stamp: each request carries its send time and id when
// the target is the embedded simulator (Target.SimLag set), nothing otherwise. The send time
// is the request_sent event's — where the silence the verdict judges begins: a process too
// slow for its speedup can take simulated seconds from there to the transport, and that is
// agentsim's own lag, not the modelled server's — and the simulated time now for a request
// sent outside an attempt.
func (r *run) stamp() agents.Stamp {
	if r.o.Target.SimLag == nil {
		return nil
	}
	clk := r.o.Clock
	return func(h http.Header, id string, sent time.Time) {
		if sent.IsZero() {
			sent = clk.Now()
		}
		h[sentAtHeader] = []string{strconv.FormatInt(sent.UnixNano(), 10)}
		if id != "" {
			h[requestIDHeader] = []string{id}
		}
	}
}
