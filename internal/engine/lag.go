package engine

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// The simulator's own lag (docs/engine.md, "The simulator's own lag"). At a high --speedup the
// wall time the simulator spends on its own work — reading and counting a request, computing
// a step, waking a loop, writing frames — can exceed the simulated time it stands for, and
// the engine falls behind its model. Each generation carries how far behind it has fallen
// (Gen.late): the hand-offs that restart a schedule from the clock's now — admission, a loop
// waking from idle, a step that hands the request on (KV transfer, stall pause), a timed event
// delivered late — add what they were late by. A token's model time (Gen.due) is the end of
// its step as the loop's timeline scheduled it, less that. The reader reports each delivery
// (Delivered), and the engine records how late it was: that is the lag a client sees.

// Lag returns the distribution of how late, in simulated time, the engine delivered tokens
// compared with when its model says they were generated: one observation per Delivered.
func (e *Engine) Lag() *clock.Lag { return &e.lag }

// Behind returns how far behind its model the engine is now, in simulated time: the largest
// lateness carried by a generation waiting for its KV reservation or in a loop's inbox (there,
// while the loop is idle, with the time since it was queued: the model's loop would have taken
// it then), in a prefill or decode step, or waiting for a timed event (KV transfer, stall
// resume) that is due. It is 0 when the engine keeps up.
func (e *Engine) Behind() time.Duration {
	now := e.clk.Now()
	b := max(e.prefillBehind.behind(now), e.decodeBehind.behind(now))
	e.mu.Lock()
	for _, g := range e.prealloc {
		b = max(b, g.lateness())
	}
	for _, g := range e.prefill.items {
		b = max(b, queuedLag(g, e.prefillTaker(), now))
	}
	for _, g := range e.decode.items {
		b = max(b, queuedLag(g, &e.decodeBehind, now))
	}
	e.mu.Unlock()
	e.delays.mu.Lock()
	defer e.delays.mu.Unlock()
	for _, d := range e.delays.items {
		if d.g != nil && (d.kind == delayTransfer || d.kind == delayResume) {
			b = max(b, d.g.lateness()+max(0, now.Sub(d.at)))
		}
	}
	return b
}

// Delivered tells the engine that the reader of g has just handed tokens to the client; it
// records how late the oldest of them is (see Lag): a reader that fell behind delivers its
// backlog late by the wait of its first token, not of its newest. Only the reader may call it,
// after Next; deliveries before the first token record nothing.
func (e *Engine) Delivered(g *Gen) {
	oldest := g.oldest.Load()
	if oldest == 0 {
		return
	}
	late := e.clk.Now().Sub(time.Unix(0, oldest))
	e.lag.Record(late)
	if w := e.window.Load(); g.window != w {
		g.window, g.windowLag = w, time.Duration(g.lastLag.Load())
	}
	e.gained.Record(max(0, late-g.windowLag))
	g.lastLag.Store(int64(late))
	// The tokens still waiting are newer; the newest's model time stands for them (a lower
	// bound of their lateness). A token generated meanwhile may lose its own, for a step.
	next := int64(0)
	if g.Pending() > 0 {
		next = g.due.Load()
	}
	g.oldest.CompareAndSwap(oldest, next)
}

// NewLateness returns the p99 of the lateness the deliveries since the previous call gained
// since then, in simulated time — how much later each came than its generation's latest
// delivery before the window (all of its lateness, for a generation's first) — and starts a
// new window. A generation delivered late stays late until it ends (Behind, Lag): this is the
// part of its lateness that is new, which slowing the clock can stop. 0 when nothing was
// delivered. It is for one reader, the --speedup max controller.
func (e *Engine) NewLateness() time.Duration {
	e.gainedMu.Lock()
	defer e.gainedMu.Unlock()
	if e.gainedWindow == nil {
		e.gainedWindow = e.gained.Window()
	}
	p99 := e.gainedWindow.Next().P99
	e.window.Add(1)
	return p99
}

// queuedLag returns how far behind its model a generation in the inbox of loop l is at now: its
// lateness, and while l is idle the time since it was queued, which the loop adds when it wakes
// (see joined). The caller holds Engine.mu.
func queuedLag(g *Gen, l *loopBehind, now time.Time) time.Duration {
	if l.busy.Load() {
		return g.lateness()
	}
	return g.lateness() + max(0, now.Sub(g.queuedAt))
}

// prefillTaker returns what Behind reads of the loop that takes from the prefill inbox: the
// decode loop's on a colocated profile, the prefill loop's otherwise.
func (e *Engine) prefillTaker() *loopBehind {
	if e.prof.engine() != EngineDisaggregated {
		return &e.decodeBehind
	}
	return &e.prefillBehind
}

// generated records the model's time of a token about to be counted as produced.
func (g *Gen) generated(at time.Time) {
	ns := at.UnixNano()
	g.due.Store(ns)
	g.oldest.CompareAndSwap(0, ns)
}

// lateness is how far behind its model the generation has fallen at its hand-offs so far;
// inside a loop it is relative to the loop's lateness (see joined), and may be negative.
func (g *Gen) lateness() time.Duration { return time.Duration(g.late.Load()) }

// fallBehind adds d to the generation's lateness when positive.
func (g *Gen) fallBehind(d time.Duration) {
	if d > 0 {
		g.late.Add(int64(d))
	}
}

// joined accounts for generations a loop has just taken from its inbox. A loop behind its
// schedule by late does not delay a newcomer by that much — it runs its next step at once —
// but every token the newcomer gets in the loop comes as late as the loop then is, less what
// it was when the newcomer joined: so the generation's lateness is rebased by -late while it
// is in the loop, and its tokens' lateness is that plus the loop's at their step (see emit;
// leave undoes the rebase). A loop waking from idle (woke) starts their step when it wakes,
// where the model's loop would have started it when they arrived: they carry the wait.
func (e *Engine) joined(gens []*Gen, late time.Duration, woke bool) {
	now := e.clk.Now()
	for _, g := range gens {
		if woke {
			g.fallBehind(now.Sub(g.queuedAt))
		}
		g.late.Add(-int64(late))
	}
}

// leave bakes the loop's lateness into a generation that leaves the loop for a hand-off
// scheduled from the clock's now (a KV transfer, a stall pause).
func (g *Gen) leave(late time.Duration) { g.late.Add(int64(late)) }

// loopBehind is what Behind reads of an engine loop, written by the loop's goroutine: the
// largest lateness of its generations relative to the loop (see joined) and the model's end of
// the step it is in or has just ended. The loop's own lateness is read live from the clock,
// so a loop that does not get to run — the process starved of CPU — shows falling behind.
type loopBehind struct {
	busy atomic.Bool
	rel  atomic.Int64 // nanoseconds, simulated
	due  atomic.Int64 // UnixNano, simulated; 0: not stepping yet
}

// publish stores the largest lateness of the generations in the loop's lists; none: idle.
func (l *loopBehind) publish(lists ...[]*Gen) {
	most, any := time.Duration(math.MinInt64), false
	for _, gens := range lists {
		for _, g := range gens {
			most, any = max(most, g.lateness()), true
		}
	}
	if any {
		l.rel.Store(int64(most))
	}
	l.busy.Store(any)
}

// idle says the loop holds no generation.
func (l *loopBehind) idle() { l.busy.Store(false) }

// behind returns how far behind its model the loop's most late generation is at now.
func (l *loopBehind) behind(now time.Time) time.Duration {
	if !l.busy.Load() {
		return 0
	}
	late := time.Duration(0)
	if due := l.due.Load(); due != 0 {
		late = max(0, now.Sub(time.Unix(0, due)))
	}
	return max(0, time.Duration(l.rel.Load())+late)
}

// stepOverhead burns d of simulated time after a step, as the simulator's own work would at
// a speedup it cannot keep up with; tests set Engine.overhead to make the engine late in a
// synctest bubble, where computing costs no time.
func (e *Engine) stepOverhead(ctx context.Context) {
	if e.overhead > 0 {
		_ = e.clk.Sleep(ctx, e.overhead)
	}
}
