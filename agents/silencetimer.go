package agents

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/workloads"
)

// silenceTimer enforces the request, TTFT and idle timeouts of one call with a single timer
// that cancels the call's context with a cause naming the timeout: one timer and one context
// per call, not a deadline context beside them (at thousands of agents, each is kept for as
// long as the stream lasts; docs/speed.md).
//
// The read path only records progress (two atomic stores); the timer is re-armed lazily:
// when it fires early because data arrived meanwhile, it sets itself for the remaining time.
// That is exact because, once the first data frame has re-armed it, the deadline only ever
// moves later: chunks push the idle deadline on, the first token removes the TTFT one, and the
// request deadline stays where it is.
type silenceTimer struct {
	clk     *clock.Clock
	sent    time.Time
	request time.Duration // 0: none
	ttft    time.Duration // 0: none
	idle    time.Duration // 0: none
	cancel  context.CancelCauseFunc

	last  atomic.Int64 // simulated ns from sent to the last data frame; -1 before the first
	token atomic.Bool  // a token (reasoning or content) has arrived

	mu    sync.Mutex // guards timer and done against the timer's own goroutine
	timer *clock.Timer
	done  bool
}

// start begins watching a request sent at sent.
func (w *silenceTimer) start(clk *clock.Clock, sent time.Time, to workloads.Timeouts, cancel context.CancelCauseFunc) {
	w.clk, w.sent, w.request, w.ttft, w.idle, w.cancel = clk, sent, to.Request, to.TTFT, to.Idle, cancel
	w.last.Store(-1)
	if at, _, ok := w.deadline(); ok {
		// Under mu: a short timer may fire before AfterFunc's result is stored.
		w.mu.Lock()
		w.arm(max(at.Sub(sent), 0))
		w.mu.Unlock()
	}
}

// chunk records a data frame arriving at now.
func (w *silenceTimer) chunk(now time.Time) {
	first := w.last.Load() < 0
	w.last.Store(int64(now.Sub(w.sent)))
	if first && w.idle > 0 {
		// From now on an idle deadline exists, and it may come before the TTFT deadline
		// the timer was set for.
		w.mu.Lock()
		if at, _, ok := w.deadline(); ok && !w.done {
			w.arm(max(at.Sub(now), 0))
		}
		w.mu.Unlock()
	}
}

// gotToken records the first token; the TTFT timeout no longer applies.
func (w *silenceTimer) gotToken() { w.token.Store(true) }

// arm sets the timer to fire after the simulated duration d. The caller holds mu.
func (w *silenceTimer) arm(d time.Duration) {
	if w.timer == nil {
		w.timer = w.clk.AfterFunc(d, w.fire)
		return
	}
	w.timer.Reset(d)
}

// fire runs on the timer's goroutine: cancel the call if a deadline has passed, else re-arm.
func (w *silenceTimer) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	at, kind, ok := w.deadline()
	if !ok {
		return // the TTFT timeout was the only one, and a token arrived
	}
	if rem := at.Sub(w.clk.Now()); rem > 0 {
		w.timer.Reset(max(rem, w.clk.ToSim(time.Nanosecond))) // at least a nanosecond of wall time, for the clock to move
		return
	}
	w.done = true
	switch kind {
	case TimeoutRequest:
		w.cancel(fmt.Errorf("request took longer than %v: %w", w.request, ErrRequestTimeout))
	case TimeoutTTFT:
		w.cancel(fmt.Errorf("no token within %v: %w", w.ttft, ErrTTFTTimeout))
	default:
		w.cancel(fmt.Errorf("no data frame for %v: %w", w.idle, ErrIdleTimeout))
	}
}

// deadline returns the earliest pending deadline and which timeout it belongs to; of two at
// the same instant, the request's, then the TTFT one.
func (w *silenceTimer) deadline() (time.Time, TimeoutKind, bool) {
	at, kind := time.Time{}, NoTimeout
	if w.request > 0 {
		at, kind = w.sent.Add(w.request), TimeoutRequest
	}
	if t := w.sent.Add(w.ttft); w.ttft > 0 && !w.token.Load() && (kind == NoTimeout || t.Before(at)) {
		at, kind = t, TimeoutTTFT
	}
	if last := w.last.Load(); w.idle > 0 && last >= 0 {
		if t := w.sent.Add(time.Duration(last) + w.idle); kind == NoTimeout || t.Before(at) {
			at, kind = t, TimeoutIdle
		}
	}
	return at, kind, kind != NoTimeout
}

// stop ends the watch; the timer will not fire or re-arm afterwards.
func (w *silenceTimer) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
}
