package calibrate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
)

// prefillPool fits prefill_attn_pool_ns, the cost of a prompt's attention passing over the
// KV other requests hold in a unified pool (docs/engine.md §3), from two shapes of traffic.
// The turn-beside probe's turns (poolFromTurns) are an agent's requests: a few hundred new
// tokens over a cached context, computed beside streams decoding. The context experiment's
// batches (poolFromBatches) are fresh prompts sent at once. Where the turns identify the term
// they set it: llama-server's CPU attention skips a block of KV cells only when all of it is
// masked, and KV written by several sequences decoding together is interleaved cell by cell,
// so the streams' KV costs a turn more per pair than fresh prompts' contiguous KV costs the
// batch after them (docs/calibrate.md §2). Otherwise the batches do, and the turns' error is
// still reported. It runs after the batch and KV fits: a batch larger than max_running or
// the KV pool waits, which the step loop does not model. Only colocated engines share a pool
// between prefill and decode; a disaggregated one keeps the base's value, a parallel one
// (whose prefills share nothing) 0.
func (f *Fit) prefillPool(d *Data, ratio float64) {
	const key = "prefill_attn_pool_ns"
	p := f.Profile
	switch k := p.EngineMode(); k {
	case engine.EngineColocatedParallel:
		p.PrefillAttnPoolNs = 0
		f.kept(key, fmt.Sprintf("engine %s: its prefills read no other request's KV: 0", k))
		return
	case engine.EngineDisaggregated:
		f.kept(key, fmt.Sprintf("engine %s: its prefill engine shares no pool with decoding requests: the base's %g kept", k, p.PrefillAttnPoolNs))
		return
	}
	paged := *p
	paged.PrefillAttnPoolNs = 0
	batches, turns := poolFromBatches(d, &paged, ratio), poolFromTurns(d, &paged, ratio)
	use := batches
	switch {
	case turns.identified():
		if batches.n() >= 2 {
			turns.src += fmt.Sprintf(" (%s alone: %.3g ± %.2g ns)", batches.src, batches.e*1e9, batches.se*1e9)
		}
		use = turns
	case turns.n() >= 2 && batches.n() >= 2:
		batches.src += fmt.Sprintf(" (%s: %.3g ± %.2g ns, not identified)", turns.src, turns.e*1e9, turns.se*1e9)
		use = batches
	case turns.n() == 1 && batches.n() >= 2:
		batches.src += " (one turn beside streams carried the server's prompt time, too few to fit)"
		use = batches
	}
	switch {
	case use.n() < 2:
		f.kept(key, fmt.Sprintf("%d context batches of 2 or more prompts completed and %d turns beside streams carried the server's prompt time, too few to fit: the base's %g kept",
			batches.n(), turns.n(), p.PrefillAttnPoolNs))
		return
	case !use.identified():
		p.PrefillAttnPoolNs = 0
		f.fitted(key, "0", "-", fmt.Sprintf("%s: indistinguishable from 0 (%.3g ± %.2g ns)", use.src, use.e*1e9, use.se*1e9))
	default:
		p.PrefillAttnPoolNs = round(use.e*1e9, 4)
		f.fitted(key, fmt.Sprintf("%.4g", use.e*1e9), fmt.Sprintf("%.2g", use.se*1e9), use.src)
	}
	for _, est := range []poolEstimate{batches, turns} {
		if est.n() > 0 {
			f.Errors = append(f.Errors, est.errorAt(p.PrefillAttnPoolNs*1e-9))
		}
	}
}

// poolEstimate is one shape of traffic's estimate of a term that is a slope (through 0, or of
// a line, see line): prefill_attn_pool_ns (prefillPool), launch_per_idle_token (launchWork). Per observation, what
// the profile without the term predicts (pred0, seconds), what was observed (obs) and what the
// term prices (the pool pairs, the idle tokens); e and se the least-squares slope, in seconds
// a pair (a token).
type poolEstimate struct {
	exp, what, src   string
	pred0, obs, pair []float64
	byPoint          map[int][]float64
	e, se            float64
	// line fits a line with an intercept instead, where the observations span two or more
	// values of pair and leave a degree of freedom: the intercept takes what the profile
	// misprices of every observation alike (the server's speed at the moment the probe ran,
	// the other terms' error on its shape), which a slope through 0 would read as the term.
	line  bool
	alpha float64 // the line's intercept, seconds
}

// add records one observation.
func (est *poolEstimate) add(point int, pred0, obs, pairs float64) {
	est.pred0, est.obs, est.pair = append(est.pred0, pred0), append(est.obs, obs), append(est.pair, pairs)
	est.byPoint[point] = append(est.byPoint[point], obs)
}

// n is how many observations it has.
func (est *poolEstimate) n() int { return len(est.obs) }

// fit fits the slope of what the profile did not predict on the pairs.
func (est *poolEstimate) fit() {
	if est.n() < 2 {
		return
	}
	if est.line && est.n() >= 3 && slices.Min(est.pair) < slices.Max(est.pair) {
		est.fitLine()
		return
	}
	var xy, xx float64
	for i, x := range est.pair {
		xy, xx = xy+x*(est.obs[i]-est.pred0[i]), xx+x*x
	}
	if xx == 0 {
		return
	}
	est.e = xy / xx
	var ss float64
	for i, x := range est.pair {
		r := est.obs[i] - est.pred0[i] - est.e*x
		ss += r * r
	}
	est.se = math.Sqrt(ss / float64(est.n()-1) / xx)
}

// fitLine is fit with an intercept (see poolEstimate.line).
func (est *poolEstimate) fitLine() {
	n := float64(est.n())
	var mx, my float64
	for i, x := range est.pair {
		mx, my = mx+x/n, my+(est.obs[i]-est.pred0[i])/n
	}
	var sxy, sxx float64
	for i, x := range est.pair {
		sxy, sxx = sxy+(x-mx)*(est.obs[i]-est.pred0[i]-my), sxx+(x-mx)*(x-mx)
	}
	est.e = sxy / sxx
	est.alpha = my - est.e*mx
	var ss float64
	for i, x := range est.pair {
		r := est.obs[i] - est.pred0[i] - est.alpha - est.e*x
		ss += r * r
	}
	est.se = math.Sqrt(ss / (n - 2) / sxx)
}

// identified reports whether the slope is over two standard errors and, on the observation
// with the most pairs, over 5 % of what was observed.
func (est *poolEstimate) identified() bool {
	if est.n() < 2 {
		return false
	}
	at := slices.Index(est.pair, slices.Max(est.pair))
	return est.e > 2*est.se && est.e*est.pair[at] >= 0.05*est.obs[at]
}

// errorAt is the estimate's observations' error with the term at e, seconds a pair.
func (est *poolEstimate) errorAt(e float64) ExpError {
	pred := make([]float64, est.n())
	for i := range pred {
		pred[i] = est.pred0[i] + e*est.pair[i]
	}
	return ExpError{Exp: est.exp, What: est.what, Points: len(est.byPoint), RMS: rmsRel(pred, est.obs), Spread: spread(est.byPoint)}
}

// poolFromBatches reads the term from the context experiment's batches: B fresh prompts sent
// at once are prefilled one after another, so each reads the KV of those before it. The
// batch's last first token, less what paged (the fitted terms, without this one) predicts
// for it (batchFirstTokens), is the term times the batch's pool pairs.
func poolFromBatches(d *Data, paged *engine.Profile, ratio float64) poolEstimate {
	est := poolEstimate{exp: ExpContext, what: "last first token of a batch", byPoint: map[int][]float64{}}
	for i, m := range d.Of(ExpContext) {
		if m.Point.Batch < 2 {
			continue
		}
		for _, run := range m.Runs {
			prompts := make([]int, 0, len(run))
			var last time.Duration
			for _, o := range run {
				if !o.OK() {
					break
				}
				prompts, last = append(prompts, int(promptTokens(&o, ratio))), max(last, o.TTFT())
			}
			if len(prompts) != len(run) {
				continue // a failed request changes what the others read
			}
			if len(prompts) > paged.MaxRunning || sum(prompts) > paged.KVCapacityTokens {
				continue // some waited for a slot or for KV, which the step loop does not model
			}
			t, x := batchFirstTokens(paged, prompts)
			est.add(i, t.Seconds(), last.Seconds(), x)
		}
	}
	if est.n() > 0 {
		est.src = fmt.Sprintf("the last first token of %d context batches of 2–%d prompts sent at once, beyond what the other terms predict",
			est.n(), slices.Max(batchSizes(d)))
	}
	est.fit()
	return est
}

// poolFromTurns reads the term from the turn-beside probe, where the server reports its own
// prompt time: a turn's prompt_ms is the step that computed it (its prompt_n tokens over its
// cache_n cached) beside the streams decoding, each holding its prompt and the tokens it had
// streamed when the step began. That time, less what paged predicts for the step
// (Profile.MixedStep), is the term times the turn's tokens × the streams' KV. A server that
// reports no prompt time leaves the turns out: their TTFT adds the wait for the step under
// way, as long as the term's share.
func poolFromTurns(d *Data, paged *engine.Profile, ratio float64) poolEstimate {
	est := poolEstimate{exp: ExpTurnBeside, what: "server prompt time of the turn", byPoint: map[int][]float64{}, line: true}
	var streams []int
	for i, m := range d.Of(ExpTurnBeside) {
		for _, run := range m.Runs {
			turn := run[1]
			if turn.Server == nil || turn.Server.Computed <= 0 {
				continue
			}
			began := turn.Chunks[0].Add(-turn.Server.Prompt)
			kv := 0
			for _, s := range run[2:] {
				kv += int(promptTokens(&s, ratio))
				for _, at := range s.Chunks {
					if at.Before(began) {
						kv++
					}
				}
			}
			chunks, prior := []int{turn.Server.Computed}, []int{turn.Server.Cached}
			pred0 := paged.MixedStep(len(run)-2, kv, chunks, prior)
			est.add(i, pred0.Seconds(), turn.Server.Prompt.Seconds(), engine.PoolPairs(chunks, prior, kv))
			streams = append(streams, len(run)-2)
		}
	}
	est.fit()
	if est.n() > 0 {
		est.src = fmt.Sprintf("the server's own prompt time (timings.prompt_ms) of %d turns of a conversation beside %s streams decoding, beyond what the other terms predict", est.n(), span(slices.Min(streams), slices.Max(streams)))
		if est.alpha != 0 {
			est.src += fmt.Sprintf(", the slope of a line whose intercept (%s a turn) is what they misprice of every turn alike", seconds(est.alpha).Round(10*time.Microsecond))
		}
	}
	return est
}

// idleSlots decides kv_idle_slots, whether a finished request's KV stays in the pool, read by
// later prompts, and fits prefill_attn_idle_ns, what a prompt pays for it (docs/engine.md §3),
// from the turn-after probe: a turn sent once the streams beside its conversation had ended
// is computed alone, over its cached context, while their slots hold what they did or
// nothing. Its prompt time — the server's own where it reports one, else its TTFT less the
// request overhead (nothing else runs) — is set beside the step priced without their KV. The
// key is true when the median turn took longer than that by more than the prefill fit misses
// a turn alone by (its error on the next-turn probe, or on the prompt lengths' TTFT where the
// server reports no prompt time) and by more than idleExcessFloor; the excess, per computed
// token and idle KV token, is then the price. A server that pays for part of that KV at the
// pool's rate (this project's llama-server: 0.26–0.90 of it in seven calibrations,
// docs/calibrate.md §4) is told from one that pays nothing by a margin the fit measured, and
// priced at what it paid. It needs the pool term, so it runs after prefillPool, and the prefix
// cache (a turn without timings computes what the cache did not hold), so after prefixCache.
func (f *Fit) idleSlots(d *Data) {
	const key, priceKey = "kv_idle_slots", "prefill_attn_idle_ns"
	p := f.Profile
	none := func(why string) {
		p.KVIdleSlots, p.PrefillAttnIdleNs = false, 0
		f.kept(key, why+": false")
		f.kept(priceKey, "kv_idle_slots is false: 0")
	}
	switch k := p.EngineMode(); {
	case k == engine.EngineColocatedParallel || k == engine.EngineDisaggregated:
		none(fmt.Sprintf("engine %s shares no pool between prefill and decode", k))
		return
	case p.PrefillAttnPoolNs == 0:
		none("prefill_attn_pool_ns is 0: no request reads another's KV, so what idle slots hold costs nothing")
		return
	}
	var without, with, price []float64
	idleMost := 0
	for _, m := range d.Of(ExpTurnIdle) {
		for _, run := range m.Runs {
			first, turn := run[0], run[1]
			idle := 0
			for _, s := range run[2:] {
				idle += s.PromptTokens + s.Tokens()
			}
			var obs time.Duration
			var computed, cached int
			switch {
			case turn.Server != nil && turn.Server.Computed > 0:
				obs, computed, cached = turn.Server.Prompt, turn.Server.Computed, turn.Server.Cached
			case turn.PromptTokens > 0 && first.PromptTokens > 0:
				obs = turn.TTFT() - p.Admission(turn.PromptTokens)
				if p.PrefixCacheTokens > 0 {
					cached = first.PromptTokens
				}
				computed = turn.PromptTokens - cached
			default:
				continue
			}
			if obs <= 0 || computed <= 0 || idle <= 0 {
				continue
			}
			step := p.MixedStep(0, 0, []int{computed}, []int{cached})
			read := time.Duration(p.PrefillAttnPoolNs * float64(computed) * float64(idle))
			without, with = append(without, obs.Seconds()/step.Seconds()), append(with, obs.Seconds()/(step+read).Seconds())
			price = append(price, float64(obs-step)/(float64(computed)*float64(idle)))
			idleMost = max(idleMost, idle)
		}
	}
	if len(without) == 0 {
		f.kept(key, fmt.Sprintf("no turn after streams that had ended completed: the base's %t kept", p.KVIdleSlots))
		f.kept(priceKey, fmt.Sprintf("no turn after streams that had ended completed: the base's %g kept", p.PrefillAttnIdleNs))
		return
	}
	r0, r1 := medianOf(without), medianOf(with)
	seen := fmt.Sprintf("%d turns after streams that had ended (up to %d KV tokens between them): prompt time %.2f× the step priced without their KV, %.2f× with it read at prefill_attn_pool_ns",
		len(without), idleMost, r0, r1)
	e, measured := f.turnAloneError()
	margin := fmt.Sprintf("%.0f %% (the prefill fit gave no error of a prompt alone)", 100*idleExcessFloor)
	if measured {
		margin = fmt.Sprintf("the larger of the prefill fit's error on the %s (%.1f %%) and %.0f %%", e.What, 100*e.RMS, 100*idleExcessFloor)
	}
	excess := fmt.Sprintf("; the excess without (%+.1f %%)", 100*(r0-1))
	if r0-1 <= max(e.RMS, idleExcessFloor) {
		p.KVIdleSlots, p.PrefillAttnIdleNs = false, 0
		f.fitted(key, "false", "-", seen+excess+" is within "+margin)
		f.kept(priceKey, "kv_idle_slots is false: 0")
		return
	}
	p.KVIdleSlots = true
	f.fitted(key, "true", "-", seen+excess+" exceeds "+margin)
	ns := medianOf(price)
	se := "-"
	if len(price) >= 2 {
		se = fmt.Sprintf("%.2g", stddev(price)/math.Sqrt(float64(len(price))))
	}
	p.PrefillAttnIdleNs = round(ns, 3)
	f.fitted(priceKey, fmt.Sprintf("%.3g", ns), se, fmt.Sprintf(
		"the same %d turns' prompt time beyond their step alone, per token computed × idle KV token (median): %.0f %% of prefill_attn_pool_ns's %.3g",
		len(price), 100*ns/p.PrefillAttnPoolNs, p.PrefillAttnPoolNs))
}

// idleExcessFloor is the least excess over the step alone that kv_idle_slots takes for KV
// paid: a turn priced from its TTFT carries a few per cent that no term models (the
// simulator, which keeps no idle KV, gave +0.6 % against a fit whose error was 0.0 %,
// TestCalibrateFindsTheUnifiedPool), and 5 % either way is a third of what calibrate check
// lets pass (docs/calibrate.md §4).
const idleExcessFloor = 0.05

// turnAloneError is how far the prefill fit misses a prompt computed alone: its error on the
// next-turn probe's server prompt times (turns over a cached context, as the turn-after
// probe's), else on the prompt lengths' TTFT.
func (f *Fit) turnAloneError() (ExpError, bool) {
	for _, want := range []ExpError{{Exp: ExpTurn, What: "server prompt time of the turn"}, {Exp: ExpPrompt, What: "TTFT at batch 1"}} {
		for _, e := range f.Errors {
			if e.Exp == want.Exp && e.What == want.What && e.Points > 0 {
				e.What = e.Exp + " probe's " + e.What
				return e, true
			}
		}
	}
	return ExpError{}, false
}

// medianOf is the median of v (the upper one of an even count).
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// span writes a range of counts: "3" or "3–7".
func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// sum adds v.
func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// batchSizes lists the context experiment's batch sizes.
func batchSizes(d *Data) []int {
	var b []int
	for _, m := range d.Of(ExpContext) {
		b = append(b, m.Point.Batch)
	}
	return b
}

// batchFirstTokens steps a colocated batch loop over prompts (server tokens) sent at once, as
// the engine's does (internal/engine/decode.go, plan and stepTime), from the end of the
// longest one's request overhead (Profile.Admission): each step computes chunks in order, within prefill_chunk_tokens and, mixed,
// what step_token_budget leaves after one token for each decoding request; a mixed step also
// decodes the prompts done, an alternating one pauses them. It returns when the last prompt's
// first token comes and the steps' engine.PoolPairs summed, the pairs prefill_attn_pool_ns
// prices.
func batchFirstTokens(p *engine.Profile, prompts []int) (time.Duration, float64) {
	mixed := p.EngineMode() == engine.EngineColocatedMixed
	computed := make([]int, len(prompts))
	kv := make([]int, len(prompts)) // a decoding prompt's KV, 0 while it prefills
	var t time.Duration
	var pairs float64
	for done := 0; done < len(prompts); {
		left := p.PrefillChunkTokens
		if mixed && p.StepTokenBudget > 0 {
			left = min(left, max(p.StepTokenBudget-done, 0))
		}
		var chunks, prior, who []int
		for i, n := range prompts {
			if left == 0 {
				break
			}
			if computed[i] >= n {
				continue
			}
			c := min(n-computed[i], left)
			left -= c
			chunks, prior, who = append(chunks, c), append(prior, computed[i]), append(who, i)
		}
		if len(chunks) == 0 {
			break // the decoding requests take the whole step budget: no prompt advances
		}
		pool := 0
		for _, k := range kv {
			pool += k
		}
		switch {
		case mixed && done > 0:
			t += p.MixedStep(done, pool, chunks, prior)
		case mixed:
			t += p.PrefillStep(chunks, prior, pool) + p.DecodeBase
		default:
			t += p.PrefillStep(chunks, prior, pool)
		}
		pairs += engine.PoolPairs(chunks, prior, pool)
		if mixed {
			for i := range kv {
				if kv[i] > 0 {
					kv[i]++
				}
			}
		}
		for j, i := range who {
			computed[i] += chunks[j]
			if computed[i] >= prompts[i] {
				kv[i] = prompts[i] + 1
				done++
			}
		}
	}
	return t + p.Admission(slices.Max(prompts)), pairs
}
