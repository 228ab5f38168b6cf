package engine

import (
	"context"
	"math"
	"slices"
	"time"
)

// batchLoop is a continuous-batching engine: up to e.running requests, one token per decoding
// request per step, with KV admission, retraction, and the decode-side faults. It is the
// decode engine of a disaggregated pair, where its only prefill work is recomputing the
// context of retracted requests, and the whole engine of a colocated profile, where it also
// prefills new requests (cache set): mixed into decode steps within budget, or, alternating,
// in prefill-only steps that pause decoding, or, parallel, each on its own beside the decode
// steps (parallel.go).
type batchLoop struct {
	e           *Engine
	colocated   bool
	alternating bool
	parallel    bool         // colocated-parallel: every prefill on its own (see parallel.go)
	budget      int          // most tokens per step, decodes and prefill chunks together
	cache       *prefixCache // colocated only

	waiting, running, wedged []*Gen
	steps                    int
	idleLogged               bool
	idleLog                  *time.Timer // the pending idle log (see run), or nil
	// due is when the model says the latest step ended, late how much later it did (see
	// timeline): the lateness of the tokens it emits.
	due  time.Time
	late time.Duration
	// stepEnd is, parallel, when the decode step in progress ends (zero: none is).
	stepEnd time.Time
	// idle holds the KV of finished requests that their slots keep (Profile.KVIdleSlots),
	// least recently used first.
	idle []idleSlot
	// unsaved holds the KV of requests that finished since the scheduler last launched one,
	// which its next launch deals with (Profile.LaunchPerIdleToken).
	unsaved []idleSlot
}

// idleSlot is a finished request's KV, kept in its slot.
type idleSlot struct {
	hash uint64 // the request's last message boundary: a request whose prefix holds it continues its conversation
	kv   int
}

// keepIdle keeps the KV of g, which finished holding kv tokens, in its slot, when the profile
// says the pool does.
func (b *batchLoop) keepIdle(g *Gen, kv int) {
	if !b.e.prof.KVIdleSlots {
		return
	}
	b.idle = append(b.idle, idleSlot{hash: lastBoundary(g), kv: kv})
	if len(b.idle) > b.e.running {
		b.idle = slices.Delete(b.idle, 0, 1)
	}
}

// finished notes that g finished holding kv tokens: its slot keeps them, in the pool when the
// profile says so (keepIdle), and until the next launch's work on them (launch).
func (b *batchLoop) finished(g *Gen, kv int) {
	b.keepIdle(g, kv)
	if b.e.prof.LaunchPerIdleToken == 0 {
		return
	}
	b.unsaved = append(b.unsaved, idleSlot{hash: lastBoundary(g), kv: kv})
	if len(b.unsaved) > b.e.running {
		b.unsaved = slices.Delete(b.unsaved, 0, 1)
	}
}

// lastBoundary is the hash of g's last message boundary, which a request continuing its
// conversation holds in its prefix; 0 when g has none.
func lastBoundary(g *Gen) uint64 {
	if n := len(g.job.Prefix); n > 0 {
		return g.job.Prefix[n-1].Hash
	}
	return 0
}

// continues reports whether g continues the conversation whose slot is s.
func (s idleSlot) continues(g *Gen) bool {
	return s.hash != 0 && slices.ContainsFunc(g.job.Prefix, func(p PrefixBlock) bool { return p.Hash == s.hash })
}

// launch is the scheduler's work on launching the first of taken, new requests it takes
// from its queue: Profile.LaunchPerIdleToken for each token the slots of the requests that
// finished since the last launch hold, but the one whose conversation that request continues
// (llama-server saves every idle slot to its prompt cache as it launches a task,
// docs/engine.md §4). Later launches find those slots dealt with.
func (b *batchLoop) launch(taken []*Gen) time.Duration {
	if len(taken) == 0 || len(b.unsaved) == 0 {
		return 0
	}
	g, tokens := taken[0], 0
	for _, s := range b.unsaved {
		if !s.continues(g) {
			tokens += s.kv
		}
	}
	b.unsaved = b.unsaved[:0]
	return time.Duration(tokens) * b.e.prof.LaunchPerIdleToken
}

// takeSlot gives a newly admitted request g a slot: its conversation's idle one, whose KV it
// continues, or, once the running requests and the idle slots fill the slots, the least
// recently used idle one, whose KV goes.
func (b *batchLoop) takeSlot(g *Gen) {
	if len(b.idle) == 0 {
		return
	}
	for i, s := range b.idle {
		if s.continues(g) {
			b.idle = slices.Delete(b.idle, i, i+1)
			return
		}
	}
	if len(b.running)+1+len(b.idle) > b.e.running {
		b.idle = slices.Delete(b.idle, 0, 1)
	}
}

// idleKV is the KV the idle slots hold.
func (b *batchLoop) idleKV() int {
	n := 0
	for _, s := range b.idle {
		n += s.kv
	}
	return n
}

// newBatchLoop builds the loop for the engine's profile.
func (e *Engine) newBatchLoop() *batchLoop {
	b := &batchLoop{e: e, budget: math.MaxInt, idleLogged: true}
	switch e.prof.engine() {
	case EngineColocatedMixed:
		b.colocated, b.budget = true, e.prof.StepTokenBudget
	case EngineColocatedAlternating:
		b.colocated, b.alternating = true, true
	case EngineColocatedParallel:
		b.colocated, b.parallel = true, true
	}
	if b.colocated {
		b.cache = newPrefixCache(e.prof.PrefixCacheTokens)
	}
	return b
}

// run steps the batch until ctx ends or the scheduler crashes.
func (b *batchLoop) run(ctx context.Context) {
	e := b.e
	clock := timeline{clk: e.clk, published: &e.decodeBehind.due}
	idle := false
	defer func() {
		if b.idleLog != nil {
			b.idleLog.Stop()
		}
	}()
	for {
		var taken []*Gen
		if b.colocated {
			taken = e.take(&e.prefill)
		} else {
			e.drainPrealloc()
		}
		launched := len(taken)
		taken = append(taken, e.take(&e.decode)...)
		e.joined(taken, clock.late(), idle)
		idle = false
		b.waiting = append(b.waiting, taken...)
		if len(taken) > 0 {
			e.decodeBehind.publish(b.running, b.waiting)
		}
		if d := b.launch(taken[:launched]); d > 0 {
			// The launch holds the loop: no step runs, and what arrives meanwhile is taken
			// before the next one.
			if !clock.step(ctx, d) {
				return
			}
			continue
		}
		b.sweep()
		b.admit()
		chunks, prior, prefilling := b.plan()
		decoding := 0
		if !b.alternating || len(prefilling) == 0 {
			decoding = b.decoding()
		}
		if decoding == 0 && len(prefilling) == 0 {
			if !b.idleLogged {
				// SGLang logs the decode gauges once when decode goes idle. They are read at
				// the end of this instant, not now: a request that ends and the one its
				// agent sends at once (a freed pacer slot) free and reserve KV at the same
				// simulated instant, in whatever order the Go scheduler runs them, and a
				// run's samples must not depend on that order.
				waiting := len(b.waiting)
				b.idleLog = e.clk.AfterInstant(func() { e.logDecode(e.clk.Now(), 0, waiting) })
				b.idleLogged = true
			}
			clock.reset()
			b.stepEnd = time.Time{}
			e.decodeBehind.idle()
			idle = true
			if !b.wait(ctx) {
				return
			}
			continue
		}
		if b.idleLog != nil {
			// Work came back within the instant the loop went idle in: it was never idle.
			b.idleLog.Stop()
			b.idleLog = nil
		}
		b.idleLogged = false
		if b.colocated && len(prefilling) > 0 {
			e.stats.prefillRunning.Store(int64(len(prefilling)))
		}
		if b.parallel {
			if !b.parallelStep(ctx, &clock) {
				return
			}
		} else {
			if !clock.step(ctx, b.stepTime(decoding > 0, chunks, prior)) {
				return
			}
			e.stepOverhead(ctx)
			b.due, b.late = clock.due(), clock.late()
			b.apply(decoding > 0, prefilling, chunks)
		}
		e.decodeBehind.publish(b.running, b.waiting)
		if b.colocated && len(prefilling) > 0 {
			// The prefill gauges are the prefill engine's; a disaggregated decode engine's
			// recomputes do not show in them.
			e.stats.prefillRunning.Store(0)
			e.logPrefill(len(prefilling), chunks)
		}
		if e.crashed.Load() {
			// The scheduler is dead: its requests stay where they are, their streams silent.
			<-ctx.Done()
			return
		}
		if b.steps++; b.steps%e.prof.DecodeLogInterval == 0 {
			e.logDecode(clock.next, b.count(), len(b.waiting))
		}
	}
}

// wait blocks until an inbox is signalled; false means the engine is stopping.
func (b *batchLoop) wait(ctx context.Context) bool {
	e := b.e
	var arrivals chan struct{} // a disaggregated prefill inbox belongs to the prefill loop
	if b.colocated {
		arrivals = e.prefill.wake
	}
	select {
	case <-e.decode.wake:
		return true
	case <-arrivals:
		return true
	case <-ctx.Done():
		return false
	}
}

// count is the number of running requests that decode (not those prefilling).
func (b *batchLoop) count() int {
	n := 0
	for _, g := range b.running {
		if g.computed >= g.target {
			n++
		}
	}
	return n
}

// sweep frees the requests whose client has gone (or that the engine aborted).
func (b *batchLoop) sweep() {
	e := b.e
	b.waiting = e.sweep(b.waiting, func(g *Gen) {
		if phase(g.phase.Load()) == phasePrefillQueue {
			e.stats.prefillQueued.Add(-1)
		} else {
			e.stats.decodeWaiting.Add(-1)
		}
		e.freeKV(g)
		e.unretract(g)
	})
	b.running = e.sweep(b.running, func(g *Gen) {
		if phase(g.phase.Load()) == phasePrefillQueue {
			e.stats.prefillQueued.Add(-1)
		} else {
			e.stats.decodeRunning.Add(-1)
		}
		e.freeKV(g)
	})
	b.wedged = e.sweep(b.wedged, func(g *Gen) { e.stats.decodeWedged.Add(-1); e.freeKV(g) })
}

// admit moves waiting requests into the running batch, first come first served, while the
// batch limit and the KV capacity allow. A request that does not hold KV (a new colocated
// request, a retracted one) gets its context's KV; a new colocated request takes what the
// prefix cache holds.
func (b *batchLoop) admit() {
	e := b.e
	n := 0
	for _, g := range b.waiting {
		if len(b.running) >= e.running {
			break
		}
		if !g.holdsKV {
			need := g.Prompt + g.Produced()
			if e.stats.kvUsed.Load()+int64(need) > int64(e.prof.KVCapacityTokens) {
				break
			}
			g.kv, g.holdsKV = need, true
			e.stats.kvUsed.Add(int64(need))
			e.unretract(g)
		}
		if phase(g.phase.Load()) == phasePrefillQueue {
			if g.computed == 0 && g.CachedTokens() == 0 {
				b.takeSlot(g)
				hit := min(b.cache.lookup(g.job.Prefix), g.Prompt-1)
				g.cached.Store(int64(hit))
				g.computed = hit
				e.stats.cachedTokens.Add(int64(hit))
			}
		} else {
			g.phase.Store(int32(phaseRunning))
			e.stats.decodeWaiting.Add(-1)
			e.stats.decodeRunning.Add(1)
		}
		b.running = append(b.running, g)
		n++
	}
	clear(b.waiting[:n])
	b.waiting = b.waiting[n:]
}

// decoding is how many running requests emit a token in a decode step.
func (b *batchLoop) decoding() int { return b.count() }

// plan picks the next step's prefill chunks over the running requests that still compute
// their context, in order, within the prefill chunk size and what the step budget leaves
// after one token for each decoding request.
func (b *batchLoop) plan() (chunks, prior []int, prefilling []*Gen) {
	if b.parallel {
		// Nothing is chunked: every request still computing its context prefills on its own.
		for _, g := range b.running {
			if g.computed < g.target {
				prefilling = append(prefilling, g)
			}
		}
		return nil, nil, prefilling
	}
	left := b.e.prof.PrefillChunkTokens
	if b.budget != math.MaxInt {
		left = min(left, max(b.budget-b.count(), 0))
	}
	for _, g := range b.running {
		if left == 0 {
			break
		}
		if g.computed >= g.target {
			continue
		}
		c := min(g.target-g.computed, left)
		left -= c
		prefilling, chunks, prior = append(prefilling, g), append(chunks, c), append(prior, g.computed)
	}
	return chunks, prior, prefilling
}

// stepTime is the duration of the next step: a decode step over the decoding requests (when
// decode), plus the prefill chunks.
func (b *batchLoop) stepTime(decode bool, chunks, prior []int) time.Duration {
	e := b.e
	n, kv := 0, 0
	for _, g := range b.running {
		if g.computed >= g.target {
			n, kv = n+1, kv+g.kv
		}
	}
	// The prompts' attention reads the idle slots' KV beside the running requests' (at its
	// own price, Profile.IdleRead); the decode step's terms are over the running requests' only.
	var d time.Duration
	switch {
	case !decode:
		// The decoding requests wait, but their KV stays in the pool beside the chunks'.
		d = e.prof.PrefillStep(chunks, prior, kv)
		if !b.alternating {
			d += e.prof.DecodeBase // a mixed step's forward pass has its fixed cost
		}
	default:
		d = e.prof.DecodeStep(n, kv) // Profile.MixedStep, with the idle slots read beside
		if len(chunks) > 0 {
			d += e.prof.PrefillStep(chunks, prior, kv)
		}
	}
	d += e.prof.IdleRead(chunks, b.idleKV())
	f := e.knobs.StepFactor * e.noise()
	if f != 1 {
		d = time.Duration(float64(d) * f)
	}
	return d
}

// apply ends a step: every decoding request (when decode) emits a token, the prefill chunks
// advance, and a request whose context is complete emits its next token (a new request its
// first). Then requests that finished, paused or wedged leave the batch, and KV overflow
// retracts the newest.
func (b *batchLoop) apply(decode bool, prefilling []*Gen, chunks []int) {
	for i, g := range prefilling {
		g.computed += chunks[i]
		if g.computed < g.target {
			continue
		}
		b.contextDone(g)
	}
	b.emitWhere(func(g *Gen) bool {
		prefilled := g.prefilled
		g.prefilled = false
		return !g.cancelled.Load() && (prefilled || (decode && g.computed >= g.target))
	})
}

// emitWhere has each running request for which emits says so emit its next token; requests
// that finished, paused or wedged leave the batch, and KV overflow then retracts the newest.
// emits sees every running request once, in order.
func (b *batchLoop) emitWhere(emits func(g *Gen) bool) {
	kept := b.running[:0]
	for _, g := range b.running {
		if !emits(g) {
			kept = append(kept, g) // cancelled ones are swept, with their KV, at the top of the loop
			continue
		}
		held := g.kv + 1 // with the token it emits
		switch b.e.emit(g, b.due, b.late) {
		case stateDone:
			b.finished(g, held)
		case stateWedged:
			b.wedged = append(b.wedged, g)
		case stateRunning:
			kept = append(kept, g)
		}
	}
	clear(b.running[len(kept):])
	b.running = kept
	b.retract()
}

// contextDone marks a request whose context is now computed: a new one enters the prefix
// cache and starts decoding, a retracted one has recomputed its context.
func (b *batchLoop) contextDone(g *Gen) {
	e := b.e
	g.prefilled = true
	if phase(g.phase.Load()) == phasePrefillQueue {
		if b.cache != nil {
			b.cache.insert(g.job.Prefix)
		}
		g.phase.Store(int32(phaseRunning))
		e.stats.prefillQueued.Add(-1)
		e.stats.decodeRunning.Add(1)
	} else {
		e.stats.recomputedTokens.Add(int64(g.target))
	}
}

// genState is where a generation is after emitting a token.
type genState int

const (
	stateRunning genState = iota
	stateDone
	statePaused
	stateWedged
)

// emit produces one token for a running request at the end of a step the model says ended at
// due and that ends late, and applies what follows: its end, the stall-stream pause, the
// long-context wedge.
func (e *Engine) emit(g *Gen, due time.Time, late time.Duration) genState {
	g.kv++
	e.stats.kvUsed.Add(1)
	e.stats.generated.Add(1)
	g.generated(due.Add(-g.lateness())) // before the reader is woken
	if g.Produced()+1 >= g.Output {
		// The last token: the request's accounting is done before the reader is woken, so a
		// reader that sees its stream end sees the request finished and its KV freed.
		e.stats.decodeRunning.Add(-1)
		e.freeKV(g)
		e.finish(g)
		g.emit()
		return stateDone
	}
	n := g.emit()
	switch {
	case g.Plan.StallAt > 0 && n >= g.Plan.StallAt && !g.stalled:
		g.stalled = true
		g.leave(late)
		g.phase.Store(int32(phasePaused))
		e.stats.decodeRunning.Add(-1)
		e.stats.decodePaused.Add(1)
		e.delays.push(e.clk.Now().Add(g.Plan.StallFor), g, delayResume)
		return statePaused
	case e.wedges(g):
		g.phase.Store(int32(phaseWedged))
		e.stats.decodeRunning.Add(-1)
		e.stats.decodeWedged.Add(1)
		return stateWedged
	}
	return stateRunning
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

// wedges draws whether a long-context sequence wedges at this step.
func (e *Engine) wedges(g *Gen) bool {
	return e.knobs.WedgeThreshold > 0 && g.kv >= e.knobs.WedgeThreshold &&
		g.rng.Float64() < e.knobs.WedgeProbability
}

// retract frees KV by sending the newest running requests back to the front of the queue
// while the KV in use exceeds the capacity. A retracted request loses its KV: when it runs
// again it first recomputes its whole context, prompt plus output so far. A retraction may
// crash the scheduler (the retract-crash fault).
func (b *batchLoop) retract() {
	e := b.e
	if e.prof.kvFull() == KVFullFail {
		b.failAll()
		return
	}
	var back []*Gen
	for e.stats.kvUsed.Load() > int64(e.prof.KVCapacityTokens) && len(b.running) > 1 {
		g := b.running[len(b.running)-1]
		b.running = b.running[:len(b.running)-1]
		e.freeKV(g)
		g.prefillEnd, g.inStep = time.Time{}, false
		if phase(g.phase.Load()) == phasePrefillQueue {
			g.computed = 0 // a first prefill starts over
		} else {
			g.phase.Store(int32(phaseDecodeWaiting))
			g.computed, g.target = 0, g.Prompt+g.Produced()
			g.retractedNeed = g.target
			e.retractedKV.Add(int64(g.target))
			e.stats.decodeRunning.Add(-1)
			e.stats.decodeWaiting.Add(1)
			e.stats.retracted.Add(1)
			if e.knobs.RetractCrash > 0 && g.rng.Float64() < e.knobs.RetractCrash {
				e.crash()
			}
		}
		back = append(back, g)
	}
	if len(back) == 0 {
		return
	}
	slices.Reverse(back)
	b.waiting = append(back, b.waiting...)
}

// failAll fails every running request, prefilling or decoding, when the KV in use exceeds
// the capacity (KVFullFail): llama.cpp's server, when llama_decode finds no room for a
// step's batch, sends each processing slot the error and releases it. Their KV is freed when
// they are swept, at the top of the next step.
func (b *batchLoop) failAll() {
	e := b.e
	if e.stats.kvUsed.Load() <= int64(e.prof.KVCapacityTokens) {
		return
	}
	for _, g := range b.running {
		e.stats.kvFailed.Add(1)
		g.aborted.Store(&Aborted{Stage: StageKVFull, Elapsed: e.clk.Now().Sub(g.Submitted), Room: g.ID})
		e.kill(g)
	}
}

// unretract forgets the KV a retracted request was waiting for: it has it, or has gone.
func (e *Engine) unretract(g *Gen) {
	if g.retractedNeed > 0 {
		e.retractedKV.Add(int64(-g.retractedNeed))
		g.retractedNeed = 0
	}
}

// freeKV returns a request's KV to the pool; requests waiting for a reservation may now fit.
func (e *Engine) freeKV(g *Gen) {
	if g.holdsKV {
		e.stats.kvUsed.Add(int64(-g.kv))
		g.kv, g.holdsKV = 0, false
		if e.preallocWaiting.Load() > 0 {
			e.decode.signal()
		}
	}
}
