package simserver

import (
	"net/http"

	"github.com/agentsim/agentsim/simserver/engine"
)

// stream answers with the SSE stream of chat.completion.chunk frames. Headers and the role
// chunk go out as soon as the request is admitted, so a request that never gets a token (pinned
// in prefill, wedged in decode) is an open, silent stream, as on a real server. Then come the
// reasoning deltas, then the content deltas (a chunk never mixes the two), each chunk flushed
// as it is written; then the finish chunk, the usage chunk when asked for, and [DONE] — unless
// a fault ends the stream with an error frame or cuts it.
func (x *exchange) stream() {
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	x.w.WriteHeader(http.StatusOK)
	enc := newChunkEncoder(x.id, x.created, x.model, x.s.opts.ReasoningField, x.req.IncludeUsage, x.gen.Key())
	if !x.send(enc.role()) {
		x.abort()
	}
	at, how := x.gen.End()
	for x.sent < at {
		reasoning := x.sent < x.gen.Reasoning
		limit := min(maxChunkTokens, at-x.sent)
		if reasoning {
			limit = min(limit, x.gen.Reasoning-x.sent)
		}
		n, ok := x.next(limit)
		if !ok || !x.send(enc.tokens(x.sent, n, reasoning)) {
			x.abort()
		}
		x.delivered(n)
	}
	switch how {
	case engine.EndCut:
		x.abort()
	case engine.EndFail:
		x.giveUp(finishError)
		_ = x.send(enc.errorFrame()) && x.send(doneFrame)
	default:
		x.s.metrics.finished(x.gen.Finish)
		ok := x.send(enc.finish(x.gen.Finish))
		if ok && x.req.IncludeUsage {
			ok = x.send(enc.usage(x.usage()))
		}
		_ = ok && x.send(doneFrame)
	}
}

// send writes one frame and flushes it to the client; false means the connection failed.
func (x *exchange) send(frame []byte) bool {
	if _, err := x.w.Write(frame); err != nil {
		return false
	}
	return x.w.FlushError() == nil
}
