package engine

import (
	"context"
	"math"
	"slices"
	"time"
)

// decodeLoop is the decode engine: continuous batching of up to e.running requests, one token
// per running request per step, with KV admission, retraction, and the decode-side faults.
func (e *Engine) decodeLoop(ctx context.Context) {
	var waiting, running, wedged []*Gen
	steps, idleLogged := 0, true
	clock := timeline{clk: e.clk}
	for {
		waiting = append(waiting, e.take(&e.decode)...)
		waiting = e.sweep(waiting, func(g *Gen) { e.stats.decodeWaiting.Add(-1); e.freeKV(g) })
		running = e.sweep(running, func(g *Gen) { e.stats.decodeRunning.Add(-1); e.freeKV(g) })
		wedged = e.sweep(wedged, func(g *Gen) { e.stats.decodeWedged.Add(-1); e.freeKV(g) })
		running, waiting = e.admit(running, waiting)
		if len(running) == 0 {
			if !idleLogged {
				e.logDecode(0, len(waiting))
				idleLogged = true
			}
			clock.reset()
			if !wait(ctx, &e.decode) {
				return
			}
			continue
		}
		idleLogged = false
		if !clock.step(ctx, e.stepTime(running)) {
			return
		}
		var newlyWedged []*Gen
		running, newlyWedged = e.step(running)
		wedged = append(wedged, newlyWedged...)
		running, waiting = e.retract(running, waiting)
		if steps++; steps%e.prof.DecodeLogInterval == 0 {
			e.logDecode(len(running), len(waiting))
		}
	}
}

// stepTime is the duration of the next decode step for the running batch.
func (e *Engine) stepTime(running []*Gen) time.Duration {
	kv := 0
	for _, g := range running {
		kv += g.kv
	}
	d := e.prof.DecodeStep(len(running), kv)
	f := e.knobs.StepFactor * e.noise()
	if f != 1 {
		d = time.Duration(float64(d) * f)
	}
	return d
}

// noise draws the profile's step-time multiplier: lognormal with mean 1 and sigma
// StepJitterSigma, times SlowStepFactor with probability SlowStepProbability. It is 1 for a
// profile without noise, and draws nothing then, so noiseless runs stay as they were.
func (e *Engine) noise() float64 {
	f := 1.0
	if s := e.prof.StepJitterSigma; s > 0 {
		f = math.Exp(s*e.jitter.NormFloat64() - s*s/2)
	}
	if p := e.prof.SlowStepProbability; p > 0 && e.jitter.Float64() < p {
		f *= e.prof.SlowStepFactor
	}
	return f
}

// admit moves waiting requests into the running batch, first come first served, while the
// batch limit and the KV capacity allow.
func (e *Engine) admit(running, waiting []*Gen) ([]*Gen, []*Gen) {
	n := 0
	for _, g := range waiting {
		if len(running) >= e.running {
			break
		}
		if !g.holdsKV {
			need := g.Prompt + g.Produced()
			if e.stats.kvUsed.Load()+int64(need) > int64(e.prof.KVCapacityTokens) {
				break
			}
			g.kv, g.holdsKV = need, true
			e.stats.kvUsed.Add(int64(need))
		}
		g.phase.Store(int32(phaseRunning))
		running = append(running, g)
		n++
	}
	e.stats.decodeWaiting.Add(int64(-n))
	e.stats.decodeRunning.Add(int64(n))
	clear(waiting[:n])
	return running, waiting[n:]
}

// step emits one token for every running request and moves the ones that finished, paused or
// wedged out of the batch. It returns the batch and the newly wedged requests.
func (e *Engine) step(running []*Gen) (kept, wedged []*Gen) {
	kept = running[:0]
	for _, g := range running {
		if g.cancelled.Load() {
			kept = append(kept, g) // swept, with its KV, at the top of the loop
			continue
		}
		g.kv++
		e.stats.kvUsed.Add(1)
		e.stats.generated.Add(1)
		n := g.emit()
		switch {
		case n >= g.Output:
			e.stats.decodeRunning.Add(-1)
			e.freeKV(g)
			e.finish(g)
		case g.Plan.StallAt > 0 && n >= g.Plan.StallAt && !g.stalled:
			g.stalled = true
			g.phase.Store(int32(phasePaused))
			e.stats.decodeRunning.Add(-1)
			e.stats.decodePaused.Add(1)
			e.delays.push(e.clk.Now().Add(g.Plan.StallFor), g, delayResume)
		case e.wedges(g):
			g.phase.Store(int32(phaseWedged))
			e.stats.decodeRunning.Add(-1)
			e.stats.decodeWedged.Add(1)
			wedged = append(wedged, g)
		default:
			kept = append(kept, g)
		}
	}
	clear(running[len(kept):])
	return kept, wedged
}

// wedges draws whether a long-context sequence wedges at this step.
func (e *Engine) wedges(g *Gen) bool {
	return e.knobs.WedgeThreshold > 0 && g.kv >= e.knobs.WedgeThreshold &&
		g.rng.Float64() < e.knobs.WedgeProbability
}

// retract frees KV by sending the newest running requests back to the front of the queue
// while the KV in use exceeds the capacity.
func (e *Engine) retract(running, waiting []*Gen) ([]*Gen, []*Gen) {
	var back []*Gen
	for e.stats.kvUsed.Load() > int64(e.prof.KVCapacityTokens) && len(running) > 1 {
		g := running[len(running)-1]
		running = running[:len(running)-1]
		e.freeKV(g)
		g.phase.Store(int32(phaseDecodeWaiting))
		back = append(back, g)
		e.stats.decodeRunning.Add(-1)
		e.stats.decodeWaiting.Add(1)
		e.stats.retracted.Add(1)
	}
	if len(back) == 0 {
		return running, waiting
	}
	slices.Reverse(back)
	return running, append(back, waiting...)
}

// freeKV returns a request's decode KV to the pool.
func (e *Engine) freeKV(g *Gen) {
	if g.holdsKV {
		e.stats.kvUsed.Add(int64(-g.kv))
		g.kv, g.holdsKV = 0, false
	}
}
