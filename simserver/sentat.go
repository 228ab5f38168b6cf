package simserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/internal/wire"
)

// sentAt returns when the request was sent by its wire.SentAtHeader, or start (when its
// handler started) when the header is absent, unreadable or later than start. A client that
// shares the server's clock — the harness with its embedded simulator — sends it, so that the
// time until the handler starts is the simulator's own lag too (docs/engine.md, "The
// simulator's own lag"): at a speedup the machine cannot keep up with, a request can spend
// simulated seconds between the client's send and the server's handler.
func sentAt(h http.Header, start time.Time) time.Time {
	v := h.Get(wire.SentAtHeader)
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
