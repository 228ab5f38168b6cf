package engine

import (
	"context"
	"time"
)

// parallelStep runs a colocated-parallel batch loop (EngineColocatedParallel) to its next
// event: the end of the decode step in progress, or of the earliest prefill, or an arrival.
// Every request still computing its context prefills on its own from the moment it is
// admitted, for Profile.ParallelPrefill at the batch it joins, and emits its first token when
// that prefill ends, whatever else runs; the decode steps go on beside the prefills, each over
// the requests decoding when it began, its time DecodeStep of every admitted request (a
// prefilling request loads the engine as a decoding one does) and the decoding requests' KV.
// It returns false when ctx ends.
func (b *batchLoop) parallelStep(ctx context.Context, clock *timeline) bool {
	e := b.e
	now := clock.at()
	for _, g := range b.running {
		// A prefill that began at this instant begins again with the batch as it now is:
		// requests arriving together see one load, whatever order they were taken in.
		if g.computed < g.target && (g.prefillEnd.IsZero() || g.prefillFrom.Equal(now)) {
			if g.prefillEnd.IsZero() {
				g.prefillScale = b.scale()
			}
			d := e.prof.ParallelPrefill(g.target-g.computed, g.computed, len(b.running))
			g.prefillFrom, g.prefillEnd = now, now.Add(time.Duration(float64(d)*g.prefillScale))
		}
	}
	if b.stepEnd.IsZero() {
		kv, decoding := 0, false
		for _, g := range b.running {
			if g.computed >= g.target {
				g.inStep, decoding, kv = true, true, kv+g.kv
			}
		}
		if decoding {
			d := e.prof.DecodeStep(len(b.running), kv)
			b.stepEnd = now.Add(time.Duration(float64(d) * b.scale()))
		}
	}
	next := b.stepEnd
	for _, g := range b.running {
		if g.computed < g.target && (next.IsZero() || g.prefillEnd.Before(next)) {
			next = g.prefillEnd
		}
	}
	if !clock.stepUntil(ctx, next.Sub(now), e.prefill.wake, e.decode.wake) {
		return false
	}
	e.stepOverhead(ctx)
	b.due, b.late = clock.due(), clock.late()
	b.parallelApply(clock.due())
	return true
}

// scale draws the factor of one piece of the loop's work: the slow-decode fault's and the
// step noise.
func (b *batchLoop) scale() float64 { return b.e.knobs.StepFactor * b.e.noise() }

// parallelApply ends what is due at the model's time at: each prefill that has ended emits its
// request's first token (a retracted request's next), and, when the decode step ends, every
// request in it emits a token. Then, as apply, requests that finished, paused or wedged leave
// the batch, and KV overflow retracts the newest.
func (b *batchLoop) parallelApply(at time.Time) {
	stepDone := !b.stepEnd.IsZero() && !b.stepEnd.After(at)
	if stepDone {
		b.stepEnd = time.Time{}
	}
	b.emitWhere(func(g *Gen) bool {
		emits := false
		switch {
		case g.cancelled.Load():
		case g.computed < g.target && !g.prefillEnd.After(at):
			g.computed, g.prefillEnd = g.target, time.Time{}
			b.contextDone(g)
			g.prefilled = false
			emits = true
		case stepDone && g.inStep:
			emits = true
		}
		if stepDone {
			g.inStep = false
		}
		return emits
	})
}
