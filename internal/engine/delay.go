package engine

import (
	"container/heap"
	"context"
	"sync"
	"time"
	"weak"
)

// delayKind is what happens when a delayed event comes due.
type delayKind int

const (
	delayAdmit            delayKind = iota // the server's own work for a request is done: its scheduler takes it
	delayTransfer                          // KV transfer complete: the request enters decode
	delayResume                            // a stalled stream resumes
	delayAbort                             // the abort delay after a client's disconnect has passed
	delayBootstrapTimeout                  // a request waiting for its KV reservation times out
	delayWaitingTimeout                    // a request whose KV has not reached decode times out
)

// delayed is one timed event. A timeout holds its generation weakly (weak set, g nil): most
// requests are long finished when their timeout comes, and the queue must not keep them alive
// for the 300 s of a PD timeout.
type delayed struct {
	at   time.Time
	g    *Gen
	weak weak.Pointer[Gen]
	kind delayKind
}

// delayQueue holds timed events in simulated time; delayLoop delivers them.
type delayQueue struct {
	mu    sync.Mutex
	items delayHeap
	wake  chan struct{}
}

func (q *delayQueue) push(at time.Time, g *Gen, kind delayKind) {
	d := delayed{at: at, g: g, kind: kind}
	if kind == delayBootstrapTimeout || kind == delayWaitingTimeout {
		d.g, d.weak = nil, weak.Make(g)
	}
	q.mu.Lock()
	heap.Push(&q.items, d)
	q.mu.Unlock()
	q.signal()
}

func (q *delayQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// due pops the events that are due at now and reports when the next one is.
func (q *delayQueue) due(now time.Time) (ready []delayed, next time.Time, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	// Timers scaled by --speedup can fire a hair early in simulated terms.
	limit := now.Add(time.Microsecond)
	for len(q.items) > 0 && !q.items[0].at.After(limit) {
		ready = append(ready, heap.Pop(&q.items).(delayed))
	}
	// Cancelled requests leave at once, so a client that gives up frees what it held. They
	// are filtered out in one pass and the heap rebuilt: removing them one by one while
	// scanning would let heap.Remove move an unvisited cancelled item past the scan.
	kept := q.items[:0]
	for _, d := range q.items {
		if d.g != nil && d.g.cancelled.Load() {
			ready = append(ready, d)
		} else {
			kept = append(kept, d)
		}
	}
	if len(kept) < len(q.items) {
		clear(q.items[len(kept):])
		q.items = kept
		heap.Init(&q.items)
	}
	if len(q.items) > 0 {
		return ready, q.items[0].at, true
	}
	return ready, time.Time{}, false
}

// delayLoop delivers KV transfers and stream resumptions when they come due.
func (e *Engine) delayLoop(ctx context.Context) {
	for {
		ready, next, pending := e.delays.due(e.clk.Now())
		now := e.clk.Now()
		for _, d := range ready {
			if d.g != nil {
				d.g.fallBehind(now.Sub(d.at)) // the model delivers it at d.at
			}
			e.deliver(d)
		}
		if len(ready) > 0 {
			continue
		}
		if !e.delays.sleep(ctx, e, next, pending) {
			return
		}
	}
}

// sleep waits until next (when pending), a signal, or the end of ctx; false means ctx ended.
func (q *delayQueue) sleep(ctx context.Context, e *Engine, next time.Time, pending bool) bool {
	var timer <-chan time.Time
	if pending {
		t := e.clk.NewTimer(next.Sub(e.clk.Now()))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
	case <-q.wake:
	case <-ctx.Done():
		return false
	}
	return true
}

func (e *Engine) deliver(d delayed) {
	g := d.g
	switch d.kind {
	case delayAdmit:
		if g.cancelled.Load() {
			e.finish(g) // it held nothing yet
			return
		}
		e.mu.Lock()
		e.admitLocked(g)
		e.mu.Unlock()
		return
	case delayAbort:
		e.abandon(g)
		return
	case delayBootstrapTimeout:
		if g := d.weak.Value(); g != nil && !g.cancelled.Load() {
			e.timeout(g, StageBootstrapping, g.Submitted)
		}
		return
	case delayWaitingTimeout:
		if g := d.weak.Value(); g != nil && !g.cancelled.Load() {
			e.timeout(g, StageWaitingForInput, d.at.Add(-e.prof.WaitingTimeout))
		}
		return
	case delayTransfer:
		if e.crashed.Load() && !g.cancelled.Load() {
			// The decode engine is dead: the transfer never completes; the waiting timeout,
			// or the client, ends the request.
			e.delays.push(e.clk.Now().Add(e.prof.TransferLatency+time.Second), g, delayTransfer)
			return
		}
		e.stats.transferQueue.Add(-1)
		e.stats.prefillInflight.Add(-1)
		if g.cancelled.Load() {
			e.freeKV(g)
			e.finish(g)
			return
		}
	case delayResume:
		e.stats.decodePaused.Add(-1)
		if g.cancelled.Load() {
			e.freeKV(g)
			e.finish(g)
			return
		}
	}
	e.enqueueDecode(g)
}

type delayHeap []delayed

func (h delayHeap) Len() int           { return len(h) }
func (h delayHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h delayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)        { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
