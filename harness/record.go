package harness

import (
	"context"
	"sync"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/freshstack"
)

// recorded is an event as Record took it: stamped with its simulated time, its wall time not
// yet rendered.
type recorded struct {
	e    events.Event
	wall time.Time
}

// inbox takes the events agents record and hands them, in the order they were stamped, to
// whoever writes them. Recording only stamps and appends under a lock held for an append:
// with thousands of agents recording at once (every agent of a run starting in the same
// instant), a lock held while an event is encoded, written and judged forms a convoy in
// which agents wait seconds to record what they did, their events stamped that late, and the
// samples taken meanwhile disagree with the events (docs/architecture.md §4).
type inbox struct {
	mu      sync.Mutex
	items   []recorded
	ready   chan struct{} // signalled when items were added
	stamped func(*recorded)
}

func newInbox(stamp func(*recorded)) *inbox {
	return &inbox{ready: make(chan struct{}, 1), stamped: stamp}
}

// put stamps a copy of e and queues it, and returns how many events are queued.
func (q *inbox) put(e *events.Event) int {
	q.mu.Lock()
	q.items = append(q.items, recorded{})
	it := &q.items[len(q.items)-1]
	it.e = *e // copied in place: no event-sized temporary on the agent's stack
	q.stamped(it)
	n := len(q.items)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return n
}

// take moves the queued events stamped at or before upTo simulated seconds (all of them when
// upTo is negative) into buf and returns it.
func (q *inbox) take(buf []recorded, upTo float64) []recorded {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.items)
	if upTo >= 0 {
		n = 0
		for n < len(q.items) && q.items[n].e.TS <= upTo {
			n++
		}
	}
	if n == len(q.items) && len(buf) == 0 {
		// All of it: hand the backlog over and keep buf's storage for the next, so that a
		// burst's events are held once, not in the inbox and in the writer's copy both (at
		// 10,000 agents starting at once, tens of megabytes).
		buf, q.items = q.items, buf[:0]
		if cap(q.items) > keptEvents {
			q.items = nil
		}
		return buf
	}
	buf = append(buf, q.items[:n]...)
	rest := copy(q.items, q.items[n:])
	clear(q.items[rest:])
	q.items = q.items[:rest]
	if rest == 0 && cap(q.items) > keptEvents {
		q.items = nil // a burst's backlog is not kept for the rest of the run
	}
	return buf
}

// keptEvents is the capacity, in events, the inbox and the writer keep between bursts: room
// for a backlog a few times assistAfter, so that the two buffers they pass each other are not
// grown again from nothing for each backlog an assist writes.
const keptEvents = 4096

// assistAfter is the backlog, in events, past which an agent that records writes the backlog
// itself when the writer is not at it. The writer is one goroutine among thousands of
// runnable agents: when they all start at once, its turns come too seldom for the events
// they record, and the backlog (360 bytes an event) grew to tens of megabytes.
const assistAfter = 1024

// assist writes the queued events on behalf of the writer unless it, or another assist, holds
// mu: an assist never waits, so agents do not queue behind each other (see inbox). The events
// are written on a goroutine of their own (freshstack): encoding them takes a deeper stack
// than a streaming agent should keep.
func (r *run) assist() {
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	freshstack.Run(func() { r.flush(-1) })
}

// writeEvents writes the recorded events as they arrive until ctx ends; the run's final
// flush writes what is left.
func (r *run) writeEvents(ctx context.Context) {
	for {
		select {
		case <-r.inbox.ready:
			r.mu.Lock()
			r.flush(-1)
			r.mu.Unlock()
		case <-ctx.Done():
			return
		}
	}
}

// flush writes the queued events stamped at or before upTo simulated seconds (all when upTo
// is negative). The caller holds mu.
func (r *run) flush(upTo float64) {
	r.taken = r.inbox.take(r.taken[:0], upTo)
	for i := range r.taken {
		it := &r.taken[i]
		it.e.Wall = events.FormatWall(it.wall)
		if it.e.Agent >= 0 {
			r.now.add(it.e, r.emit)
		} else {
			// The harness's own events (start, stop, end) follow what happened before them.
			r.now.release(r.emit)
			r.emit(it.e)
		}
	}
	clear(r.taken)
	if cap(r.taken) > keptEvents {
		r.taken = nil
	}
}
