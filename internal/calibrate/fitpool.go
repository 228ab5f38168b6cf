package calibrate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
)

// prefillPool fits prefill_attn_pool_ns, the cost of a prompt's attention passing over the
// KV other requests hold in a unified pool (docs/engine.md §3), from the context experiment's
// batches: B fresh prompts sent at once are prefilled one after another, so each reads the
// KV of those before it. The batch's last first token, less what the terms already fitted
// predict for it (batchFirstTokens), is the pool term times the batch's pool pairs; the fit
// is that least-squares slope through 0. It runs after the batch and KV fits: a batch larger
// than max_running or the KV pool waits, which the step loop does not model. Only colocated
// engines share a pool between prefill and decode; a disaggregated one keeps the base's value,
// a parallel one (whose prefills share nothing) 0.
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
	var pairs, resid, obs, pred0 []float64
	byPoint := map[int][]float64{}
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
			if len(prompts) > p.MaxRunning || sum(prompts) > p.KVCapacityTokens {
				continue // some waited for a slot or for KV, which the step loop does not model
			}
			t, x := batchFirstTokens(&paged, prompts)
			pairs, obs, pred0 = append(pairs, x), append(obs, last.Seconds()), append(pred0, t.Seconds())
			resid = append(resid, last.Seconds()-t.Seconds())
			byPoint[i] = append(byPoint[i], last.Seconds())
		}
	}
	if len(pairs) < 2 {
		f.kept(key, fmt.Sprintf("%d context batches of 2 or more prompts completed, too few to fit: the base's %g kept", len(pairs), p.PrefillAttnPoolNs))
		return
	}
	var xy, xx float64
	for i, x := range pairs {
		xy, xx = xy+x*resid[i], xx+x*x
	}
	e := xy / xx
	var ss float64
	for i, x := range pairs {
		ss += (resid[i] - e*x) * (resid[i] - e*x)
	}
	se := math.Sqrt(ss / float64(len(pairs)-1) / xx)
	src := fmt.Sprintf("the last first token of %d context batches of 2–%d prompts sent at once, beyond what the other terms predict",
		len(pairs), slices.Max(batchSizes(d)))
	at := slices.Index(pairs, slices.Max(pairs))
	if e <= 2*se || e*pairs[at] < 0.05*obs[at] {
		p.PrefillAttnPoolNs = 0
		f.fitted(key, "0", "-", fmt.Sprintf("%s: indistinguishable from 0 (%.3g ± %.2g ns)", src, e*1e9, se*1e9))
		f.poolError(pred0, obs, byPoint, 0, pairs)
		return
	}
	p.PrefillAttnPoolNs = round(e*1e9, 4)
	f.fitted(key, fmt.Sprintf("%.4g", e*1e9), fmt.Sprintf("%.2g", se*1e9), src)
	f.poolError(pred0, obs, byPoint, e, pairs)
}

// poolError records the fit's error on the context batches' last first tokens.
func (f *Fit) poolError(pred0, obs []float64, byPoint map[int][]float64, e float64, pairs []float64) {
	pred := make([]float64, len(obs))
	for i := range obs {
		pred[i] = pred0[i] + e*pairs[i]
	}
	f.Errors = append(f.Errors, ExpError{Exp: ExpContext, What: "last first token of a batch", Points: len(byPoint), RMS: rmsRel(pred, obs), Spread: spread(byPoint)})
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
