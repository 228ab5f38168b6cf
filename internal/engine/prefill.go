package engine

import (
	"context"
	"time"
)

// prefillLoop is the prefill engine of a disaggregated pair: chunked prefill steps over the
// requests whose decode KV is reserved, in arrival order, then the KV transfer handshake. It owns the prefix cache and the pinned requests.
func (e *Engine) prefillLoop(ctx context.Context) {
	cache := newPrefixCache(e.prof.PrefixCacheTokens)
	var queue, pinned []*Gen
	var transferFree time.Time
	clock := timeline{clk: e.clk, published: &e.prefillBehind.due}
	idle := false
	for {
		taken := e.take(&e.prefill)
		e.joined(taken, clock.late(), idle)
		idle = false
		queue = append(queue, taken...)
		if len(taken) > 0 {
			e.prefillBehind.publish(queue)
		}
		queue = e.sweep(queue, func(g *Gen) { e.stats.prefillQueued.Add(-1); e.freeKV(g) })
		pinned = e.sweep(pinned, func(g *Gen) { e.stats.prefillInflight.Add(-1); e.freeKV(g) })
		if len(queue) == 0 {
			clock.reset()
			e.prefillBehind.idle()
			idle = true
			if !wait(ctx, &e.prefill) {
				return
			}
			continue
		}
		batch, chunks, prior := e.prefillBatch(queue, cache)
		e.stats.prefillRunning.Store(int64(len(batch)))
		if !clock.step(ctx, e.prof.PrefillStep(chunks, prior, 0)) {
			return
		}
		e.stepOverhead(ctx)
		late := clock.late()
		e.stats.prefillRunning.Store(0)
		done := 0
		for i, g := range batch {
			g.computed += chunks[i]
			if g.computed < g.Prompt {
				continue
			}
			done++
			cache.insert(g.job.Prefix)
			e.stats.prefillQueued.Add(-1)
			e.stats.prefillInflight.Add(1)
			g.leave(late)
			if g.Plan.Pinned {
				g.phase.Store(int32(phasePinned))
				pinned = append(pinned, g)
				continue
			}
			g.phase.Store(int32(phaseInflight))
			transferFree = e.scheduleTransfer(g, transferFree)
		}
		queue = queue[done:]
		e.prefillBehind.publish(queue)
		e.logPrefill(len(batch), chunks)
	}
}

// prefillBatch picks the next step's chunks, first come first served, within the token budget.
// Requests are finished in order, so the finished ones are always a prefix of the queue.
func (e *Engine) prefillBatch(queue []*Gen, cache *prefixCache) (batch []*Gen, chunks, prior []int) {
	budget := e.prof.PrefillChunkTokens
	for _, g := range queue {
		if budget == 0 {
			break
		}
		if g.computed == 0 && g.CachedTokens() == 0 {
			// First look at this request: take what the cache holds, but always compute
			// at least the last token.
			hit := min(cache.lookup(g.job.Prefix), g.Prompt-1)
			g.cached.Store(int64(hit))
			g.computed = hit
			e.stats.cachedTokens.Add(int64(hit))
		}
		c := min(g.Prompt-g.computed, budget)
		budget -= c
		batch, chunks, prior = append(batch, g), append(chunks, c), append(prior, g.computed)
	}
	return batch, chunks, prior
}

// scheduleTransfer queues the bootstrap handshake behind the ones already scheduled (the
// transfer thread serves one at a time) and returns when the thread is next free.
func (e *Engine) scheduleTransfer(g *Gen, free time.Time) time.Time {
	now := e.clk.Now()
	if free.Before(now) {
		free = now
	}
	free = free.Add(e.prof.TransferService(g.Prompt))
	e.stats.transferQueue.Add(1)
	e.delays.push(free.Add(e.prof.TransferLatency), g, delayTransfer)
	return free
}

// sweep removes cancelled generations from a queue, calling release for each.
func (e *Engine) sweep(queue []*Gen, release func(*Gen)) []*Gen {
	kept := queue[:0]
	for _, g := range queue {
		if g.cancelled.Load() {
			release(g)
			e.finish(g)
			continue
		}
		kept = append(kept, g)
	}
	clear(queue[len(kept):])
	return kept
}
