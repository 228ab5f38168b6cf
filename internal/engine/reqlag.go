package engine

import (
	"slices"
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

// genLag is g's lag for RequestLag: its latest delivery's lateness, or how far behind its
// model it is now — its oldest token not yet delivered, or where it waits. Where g is in a loop it is taken to be as late as the
// loop's latest generation: an upper bound, never more than the engine's largest. Waiting
// for a timed event (KV transfer, stall resume), it is behind by how late that event will be
// handled, as Behind counts it; a paused stream's earlier deliveries do not count: its model
// gives it no token until the pause ends, as a wedged one's none at all.
func (e *Engine) genLag(g *Gen) time.Duration {
	p := phase(g.phase.Load())
	now := e.clk.Now()
	lag := max(time.Duration(g.lastLag.Load()), g.lateness())
	if oldest := g.oldest.Load(); oldest != 0 {
		// Tokens generated and not yet delivered: as late as the oldest of them is now.
		lag = max(lag, now.Sub(time.Unix(0, oldest)))
	}
	switch p {
	case phaseWedged, phasePinned:
		return 0
	case phasePaused:
		lag = e.delayedLag(g, now)
	case phaseInflight:
		lag = max(lag, e.delayedLag(g, now))
	case phasePrefillQueue:
		lag = max(lag, e.loopLag(g, &e.prefill, e.prefillTaker(), now))
	case phaseDecodeWaiting, phaseRunning:
		lag = max(lag, e.loopLag(g, &e.decode, &e.decodeBehind, now))
	}
	return max(0, lag)
}

// loopLag returns how far behind its model g is while in inbox q, or in loop l that takes
// from it (as late as the loop's latest generation; see queuedLag for the inbox).
func (e *Engine) loopLag(g *Gen, q *inbox, l *loopBehind, now time.Time) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if slices.Contains(q.items, g) {
		return queuedLag(g, l, now)
	}
	return l.behind(now)
}

// delayedLag returns how far behind its model g is while it waits for its KV transfer or the
// end of its stall: its lateness, which the event will be handled with, from when the model
// has the event (its time less that lateness); 0 before.
func (e *Engine) delayedLag(g *Gen, now time.Time) time.Duration {
	e.delays.mu.Lock()
	defer e.delays.mu.Unlock()
	for _, d := range e.delays.items {
		if d.g == g && (d.kind == delayTransfer || d.kind == delayResume) {
			return max(0, g.lateness()+now.Sub(d.at))
		}
	}
	return max(0, g.lateness()) // handed on already
}
