package engine

import (
	"sync"
	"time"
)

// Per-request lag (docs/engine.md, "The simulator's own lag"). The engine's lag (Lag, Behind)
// is the largest of any request's; a client that judges one request's silence needs that
// request's own: a request the model gives no token (wedged by long-context-wedge, pinned by
// prefill-pin) is not behind its model however late the others are. The HTTP front tracks
// each request under the client's id while it is open (Track, Untrack); RequestLag reads it,
// and for a while after it ended.

// endedKept bounds how many ended requests' lag RequestLag still answers for: the client
// reads a request's lag when its stream ends, after the handler may have untracked it.
const endedKept = 1024

// requestLags maps the client's request ids to their generations while open, and to their
// final lag for the endedKept most recently ended.
type requestLags struct {
	mu    sync.Mutex
	open  map[string]*Gen
	ended map[string]time.Duration
	ring  []string // ids in ended, oldest first from next
	next  int
}

// Track starts answering RequestLag for id with g's lag; id is the client's id for the
// request ("" tracks nothing). Untrack must follow when the request ends.
func (e *Engine) Track(id string, g *Gen) {
	if id == "" {
		return
	}
	r := &e.reqLags
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open == nil {
		r.open = map[string]*Gen{}
	}
	r.open[id] = g
}

// Untrack ends the tracking of id: RequestLag answers with its lag now for the endedKept
// requests ended most recently, then no more.
func (e *Engine) Untrack(id string) {
	if id == "" {
		return
	}
	r := &e.reqLags
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.open[id]
	if g == nil {
		return
	}
	delete(r.open, id)
	if r.ended == nil {
		r.ended = make(map[string]time.Duration, endedKept)
		r.ring = make([]string, endedKept)
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.ended, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % endedKept
	r.ended[id] = e.genLag(g)
}

// RequestLag returns how far behind its model, in simulated time, the engine is on the
// request the client tracks as id: the lateness of its latest delivery, or how far behind its
// model it is now, the larger; 0 while the model gives it no token (wedged, pinned). ok is
// false for an id not tracked, or untracked too long ago.
func (e *Engine) RequestLag(id string) (lag time.Duration, ok bool) {
	r := &e.reqLags
	r.mu.Lock()
	g := r.open[id]
	lag, ok = r.ended[id]
	r.mu.Unlock()
	if g != nil {
		return e.genLag(g), true
	}
	return lag, ok
}

// genLag is g's lag for RequestLag. Where g is in a loop it is taken to be as late as the
// loop's latest generation: an upper bound, never more than Behind.
func (e *Engine) genLag(g *Gen) time.Duration {
	p := phase(g.phase.Load())
	if p == phaseWedged || p == phasePinned {
		return 0
	}
	now := e.clk.Now()
	lag := max(time.Duration(g.lastLag.Load()), g.lateness())
	switch p {
	case phasePrefillQueue, phaseInflight:
		lag = max(lag, e.prefillBehind.behind(now))
	case phaseDecodeWaiting, phaseRunning, phasePaused:
		lag = max(lag, e.decodeBehind.behind(now))
	}
	return max(0, lag)
}
