package harness

import (
	"net/http"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/internal/wire"
)

// stamp returns the agents' request stamp: each request carries its send time and id when
// the target is the embedded simulator (Target.SimLag set), nothing otherwise. The simulator,
// which shares the run's clock, counts the time from that send until its handler starts in
// its own lag (docs/engine.md) and keeps each request's own lag under its id
// (SimLag.RequestLag). The send time is the request_sent event's — where the silence the
// verdict judges begins: a process too slow for its speedup can take simulated seconds from
// there to the transport, and that is agentsim's own lag, not the modelled server's — and the
// simulated time now for a request sent outside an attempt.
func (r *run) stamp() agents.Stamp {
	if r.o.Target.SimLag == nil {
		return nil
	}
	clk := r.o.Clock
	return func(h http.Header, id string, sent time.Time) {
		if sent.IsZero() {
			sent = clk.Now()
		}
		h[wire.SentAtHeader] = []string{strconv.FormatInt(sent.UnixNano(), 10)}
		if id != "" {
			h[wire.RequestIDHeader] = []string{id}
		}
	}
}
