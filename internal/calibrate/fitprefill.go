package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/plural"
)

// kindRatio is one interference run: the longest gap in the decoding streams while the long
// prompt was prefilled, over that prefill's window, and the streams' usual step.
type kindRatio struct {
	ratio, step float64
	window      time.Duration
	long        float64 // the long prompt, server tokens
	// stretched is the most gaps of one decoding stream, in the prefill's window, longer than
	// three of its usual steps and a twentieth of the window: on colocated-mixed, the steps that
	// carried a chunk of the long prompt.
	stretched int
}

// interferenceRuns reads the interference probe.
func interferenceRuns(d *Data, ratio float64) []kindRatio {
	var out []kindRatio
	for _, m := range d.Of(ExpInterference) {
		for _, run := range m.Runs {
			long := &run[len(run)-1]
			if !long.OK() {
				continue
			}
			lo, hi := long.Start, long.Chunks[0]
			w := hi.Sub(lo)
			var gap time.Duration
			var steps []float64
			stretched := 0
			for _, o := range run[:len(run)-1] {
				if !o.OK() {
					continue
				}
				steps = append(steps, o.TPOT().Seconds())
				var in, usual []time.Duration
				for i := 1; i < len(o.Chunks); i++ {
					a, b := o.Chunks[i-1], o.Chunks[i]
					if b.After(lo) && a.Before(hi) {
						gap = max(gap, b.Sub(a))
						in = append(in, b.Sub(a))
					} else {
						usual = append(usual, b.Sub(a))
					}
				}
				if len(usual) == 0 {
					continue
				}
				slices.Sort(usual)
				over := max(3*usual[len(usual)/2], w/20)
				n := 0
				for _, g := range in {
					if g > over {
						n++
					}
				}
				stretched = max(stretched, n)
			}
			if len(steps) == 0 || w <= 0 {
				continue
			}
			slices.Sort(steps)
			out = append(out, kindRatio{ratio: gap.Seconds() / w.Seconds(), step: steps[len(steps)/2], window: w, long: promptTokens(long, ratio), stretched: stretched})
		}
	}
	return out
}

// kind chooses the engine kind whose prediction of the interference probe is nearest:
// disaggregated streams keep their step, colocated-mixed ones stretch one step per chunk of the
// long prompt (the longest gap a chunk's share of it), colocated-alternating ones pause for all
// of it.
func (f *Fit) kind(d *Data, ratio float64, chunk int) {
	runs := interferenceRuns(d, ratio)
	p := f.Profile
	if len(runs) == 0 {
		p.PrefillChunkTokens = chunk
		f.kept("engine", fmt.Sprintf("the interference probe did not run: the base's %s kept", p.EngineMode()))
		f.Evidence = "none: the interference probe did not run"
		return
	}
	var obs, window, step, long float64
	for _, r := range runs {
		obs, window, step, long = obs+r.ratio, window+r.window.Seconds(), step+r.step, long+r.long
	}
	n := float64(len(runs))
	obs, window, step, long = obs/n, window/n, step/n, long/n
	// A mixed step carries at most a chunk, less the two decoding streams' tokens: its share of
	// the prompt is the longest gap, one chunk over several, nearly all of a prompt barely over
	// one chunk.
	first := math.Min(float64(max(chunk-2, 1)), long)
	pred := map[engine.EngineKind]float64{
		engine.EngineDisaggregated:        math.Min(step/window, 1),
		engine.EngineColocatedMixed:       math.Min(first/long+step/window, 1),
		engine.EngineColocatedAlternating: 1,
	}
	best, bestErr := engine.EngineKind(""), math.Inf(1)
	var parts []string
	for _, k := range []engine.EngineKind{engine.EngineDisaggregated, engine.EngineColocatedMixed, engine.EngineColocatedAlternating} {
		e := math.Abs(math.Log(math.Max(obs, 1e-6) / pred[k]))
		parts = append(parts, fmt.Sprintf("%s %.2f", k, pred[k]))
		if e < bestErr {
			best, bestErr = k, e
		}
	}
	f.Evidence = fmt.Sprintf("while a %.0f-token prompt was prefilled (%s), the decoding streams' longest gap was %.2f of it (their step %s); predicted: %s",
		long, seconds(window).Round(time.Microsecond), obs, seconds(step).Round(time.Microsecond), strings.Join(parts, ", "))
	if best != engine.EngineDisaggregated && pred[engine.EngineColocatedMixed] > 0.85 {
		// Both pause decoding for all of a prompt of about one chunk: the probe cannot tell
		// them apart, and for prompts up to a chunk they behave alike.
		best = engine.EngineColocatedMixed
		f.Evidence += fmt.Sprintf("; a %.0f-token prompt is about one chunk of %d, which colocated-mixed and colocated-alternating both prefill in one stretched step: the probe cannot tell them apart (a longer --max-prompt can), so colocated-mixed, the more common", long, chunk)
	}
	source := "interference probe, nearest prediction (" + fmt.Sprintf("%d runs", len(runs)) + ")"
	if best == engine.EngineDisaggregated {
		// Decoding goes on through a prefill on two kinds: a prefill engine of its own, which
		// prompts sent together share, and prefills that share nothing.
		if stagger, evidence, ok := staggerOf(d, ratio, chunk); ok {
			f.Evidence += "; " + evidence
			source += " and the context experiment's first tokens"
			if stagger < staggerShared {
				best = engine.EngineColocatedParallel
			}
		}
	}
	if best == engine.EngineColocatedMixed {
		if measured := f.chunkOf(runs, chunk); measured != chunk {
			chunk = measured
			pred[best] = math.Min(math.Min(float64(chunk-2), long)/long+step/window, 1)
			f.Evidence += fmt.Sprintf("; with the chunk measured, %d tokens, colocated-mixed predicts %.2f", chunk, pred[best])
		}
	}
	f.setKind(best, chunk)
	f.fitted("engine", string(best), "-", source)
	f.Errors = append(f.Errors, ExpError{Exp: ExpInterference, What: "longest gap / prefill window, absolute", Points: len(runs),
		RMS: math.Abs(pred[best] - obs), Spread: rangeOf(runs)})
}

// chunkOf reads a colocated-mixed server's prefill batch from the interference probe: the long
// prompt went through in as many steps as the decoding streams saw stretched, so a chunk is the
// prompt over them, taken as the nearest power of two (llama.cpp's --batch-size of 2 048,
// vLLM's max_num_batched_tokens of 2 048, 8 192 or 16 384): a step whose chunk was short, or a
// gap a slow moment stretched, moves the count by one without moving the power of two. A run
// that saw fewer than three steps stretched says little (a prompt of one or two chunks, or
// gaps a noisy server hid), so it is set aside; the runs left decide when they agree. It keeps
// given (--chunk-tokens, or the base's) when no run is left or they disagree.
func (f *Fit) chunkOf(runs []kindRatio, given int) int {
	var sizes []int
	var counts, aside []string
	for _, r := range runs {
		count := fmt.Sprintf("%d steps for %.0f tokens", r.stretched, r.long)
		counts = append(counts, count)
		if r.stretched < 3 {
			aside = append(aside, count)
			continue
		}
		sizes = append(sizes, 1<<int(math.Round(math.Log2(r.long/float64(r.stretched)))))
	}
	switch {
	case len(runs) == 0:
		return given
	case len(sizes) == 0:
		f.kept("prefill_chunk_tokens", fmt.Sprintf("the interference probe's decoding streams saw the long prompt go through in %s: fewer than three stretched steps in a run say little of the chunk, %d (--chunk-tokens or the base's) kept",
			strings.Join(counts, ", "), given))
		return given
	case slices.Min(sizes) != slices.Max(sizes):
		f.kept("prefill_chunk_tokens", fmt.Sprintf("the interference runs disagree (%s): %d (--chunk-tokens or the base's) kept", strings.Join(counts, ", "), given))
		return given
	}
	src := fmt.Sprintf("interference probe: the decoding streams saw the long prompt go through in %s; the nearest power of two", strings.Join(counts, ", "))
	if len(aside) > 0 {
		src += fmt.Sprintf(", from the runs that saw three steps or more (%s set aside)", strings.Join(aside, ", "))
	}
	if sizes[0] != given {
		src += fmt.Sprintf(" (--chunk-tokens or the base gave %d)", given)
	}
	f.fitted("prefill_chunk_tokens", fmt.Sprint(sizes[0]), "-", src)
	return sizes[0]
}

// staggerShared is the least stagger (see staggerOf) that says prompts sent together share a
// prefill: one that shares it has them done one after another (≈ 1), one that shares nothing
// has them done together (≈ 0).
const staggerShared = 0.5

// staggerOf reads how prompts sent together are prefilled, from the context experiment's
// batches of B ≥ 4 prompts of P tokens too long to share one step ((B − 1)·P ≥ chunk): their
// first tokens' spread (last − first) over the (B − 1)·b·P a shared prefill would put between
// them, b the per-token slope of TTFT at batch 1 (the prompt-length experiment). It returns the
// median over the runs, its evidence, and false when no run or no slope tells.
func staggerOf(d *Data, ratio float64, chunk int) (float64, string, bool) {
	var x [][]float64
	var y []float64
	for _, m := range d.Of(ExpPrompt) {
		for _, o := range m.OK() {
			x, y = append(x, []float64{1, promptTokens(&o, ratio)}), append(y, o.TTFT().Seconds())
		}
	}
	line, err := fitLSQ(x, y)
	if err != nil || line.beta[1] <= 2*line.se[1] {
		return 0, "", false
	}
	var each []float64
	var batch, tokens float64
	for _, m := range d.Of(ExpContext) {
		for _, run := range m.Runs {
			var first, last time.Duration
			var prompt float64
			n := 0
			for _, o := range run {
				if !o.OK() {
					continue
				}
				t := o.TTFT()
				if n == 0 || t < first {
					first = t
				}
				last, prompt, n = max(last, t), prompt+promptTokens(&o, ratio), n+1
			}
			if n < 4 || n != len(run) {
				continue
			}
			prompt /= float64(n)
			if float64(n-1)*prompt < float64(chunk) {
				continue
			}
			shared := float64(n-1) * line.beta[1] * prompt
			each = append(each, (last-first).Seconds()/shared)
			batch, tokens = batch+float64(n), tokens+prompt
		}
	}
	if len(each) == 0 {
		return 0, "", false
	}
	slices.Sort(each)
	s := each[len(each)/2]
	n := float64(len(each))
	kind := "shared"
	if s < staggerShared {
		kind = "their own"
	}
	return s, fmt.Sprintf("%d batches of %.0f prompts of %.0f tokens sent together had their first tokens spread over %.2f of the time a shared prefill puts between them (%s a token at batch 1): the prompts were prefilled %s (shared ≈ 1, their own ≈ 0)",
		len(each), batch/n, tokens/n, s, seconds(line.beta[1]).Round(time.Nanosecond), kind), true
}

// rangeOf is the interference runs' spread: (max − min)/mean of their ratios.
func rangeOf(runs []kindRatio) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = r.ratio
	}
	return spread(map[int][]float64{0: v})
}

// setKind makes the profile of that engine kind: a colocated one has no KV transfer or PD
// timeouts, and prefills in chunks of the server's batch.
func (f *Fit) setKind(k engine.EngineKind, chunk int) {
	p := f.Profile
	was := p.EngineMode()
	p.Engine, p.PrefillChunkTokens = k, chunk
	if k == engine.EngineDisaggregated {
		return
	}
	p.TransferSerial, p.TransferPerTokenNs, p.TransferLatency = 0, 0, 0
	p.BootstrapTimeout, p.WaitingTimeout, p.DecodeIgnoresDisconnect = 0, 0, false
	p.StepTokenBudget = 0
	if k == engine.EngineColocatedMixed {
		p.StepTokenBudget = chunk
	}
	if was == engine.EngineDisaggregated {
		f.Notes = append(f.Notes, "colocated: the base's KV transfer and PD timeouts set to 0")
	}
}

// transfer fits a disaggregated server's transfer_serial: its one transfer thread serves the
// requests of a batch one after the other, so their first tokens come that far apart. It is
// the median over the concurrency sweep's runs of at least 4 requests of the slope of their
// first tokens, in order.
func (f *Fit) transfer(d *Data) {
	p := f.Profile
	if p.EngineMode() != engine.EngineDisaggregated {
		return
	}
	var slopes []float64
	for _, m := range d.Of(ExpConcurrency) {
		if m.Point.Batch < 4 {
			continue
		}
		for _, run := range m.Runs {
			var firsts []float64
			for _, o := range run {
				if o.OK() {
					firsts = append(firsts, o.TTFT().Seconds())
				}
			}
			if len(firsts) < 4 {
				continue
			}
			slices.Sort(firsts)
			x := make([][]float64, len(firsts))
			for i := range firsts {
				x[i] = []float64{1, float64(i)}
			}
			if fit, err := fitLSQ(x, firsts); err == nil {
				slopes = append(slopes, fit.beta[1])
			}
		}
	}
	if len(slopes) == 0 {
		f.kept("transfer_serial", "no concurrency point of 4 or more requests")
		return
	}
	slices.Sort(slopes)
	p.TransferSerial = max(seconds(slopes[len(slopes)/2]), 0)
	f.fitted("transfer_serial", p.TransferSerial.String(), seconds(stddev(slopes)).String(),
		fmt.Sprintf("first tokens of a batch one transfer apart, median over %d runs", len(slopes)))
}

// prefill fits the prompt's compute at batch 1 over the prompt lengths: per chunk a fixed
// cost, per token prefill_per_token, and the attention term times Σ c_i·(p_i + c_i/2) over a
// prompt's chunks, which is c·(p + c/2) for c tokens computed after p cached however it is
// chunked. Where a colocated server reports its own prompt time (llama-server's timings), the
// compute is fitted to that, and the rest of each TTFT — the server's work outside its steps —
// becomes request_overhead (serverOverhead); otherwise to TTFT itself, which then charges that
// work to the compute terms. Disaggregated, a fixed part per request (the KV transfer and the
// first decode step) comes on top; it is told from the per-chunk cost only when the prompts span
// more than one chunk count.
func (f *Fit) prefill(d *Data, ratio float64, chunk int) {
	p := f.Profile
	disagg := p.EngineMode() == engine.EngineDisaggregated
	type row struct{ computed, cached, y float64 }
	var rows, timed []row
	var ttfts, totals []float64
	turns, turnTTFT := 0, map[int][]float64{} // the next turns among the timed rows, after the prompt lengths'
	byPoint, timedBy := map[int][]float64{}, map[int][]float64{}
	for i, m := range d.Of(ExpPrompt) {
		for _, o := range m.OK() {
			rows = append(rows, row{promptTokens(&o, ratio), 0, o.TTFT().Seconds()})
			byPoint[i] = append(byPoint[i], o.TTFT().Seconds())
			if s := o.Server; s != nil && !disagg {
				timed = append(timed, row{float64(s.Computed), float64(s.Cached), s.Prompt.Seconds()})
				timedBy[i] = append(timedBy[i], s.Prompt.Seconds())
				ttfts, totals = append(ttfts, o.TTFT().Seconds()), append(totals, promptTokens(&o, ratio))
			}
		}
	}
	keys := []string{"prefill_base", "prefill_per_token", "prefill_attn_per_token2_ns"}
	if len(byPoint) < 3 {
		for _, k := range keys {
			f.kept(k, fmt.Sprintf("%d prompt lengths measured, too few to fit", len(byPoint)))
		}
		return
	}
	src := fmt.Sprintf("TTFT of %d requests at %d prompt lengths", len(rows), len(byPoint))
	serverTimed := len(timedBy) == len(byPoint) && len(timed) == len(rows)
	if serverTimed {
		// The next turns price the attention over a cached context; each turn is a point of
		// its own for the spread.
		for i, m := range d.Of(ExpTurn) {
			for _, run := range m.Runs {
				if o := run[len(run)-1]; o.OK() && o.Server != nil {
					s := o.Server
					timed = append(timed, row{float64(s.Computed), float64(s.Cached), s.Prompt.Seconds()})
					timedBy[-1-i] = append(timedBy[-1-i], s.Prompt.Seconds())
					ttfts, totals = append(ttfts, o.TTFT().Seconds()), append(totals, promptTokens(&o, ratio))
					turnTTFT[i] = append(turnTTFT[i], o.TTFT().Seconds())
					turns++
				}
			}
		}
		rows = timed
		src = fmt.Sprintf("the server's own prompt time (timings.prompt_ms) of %d requests at %d prompt lengths", len(rows)-turns, len(byPoint))
		if turns > 0 {
			src += fmt.Sprintf(" and of %d next turns over a cached context", turns)
		}
	} else if disagg {
		f.kept("request_overhead", "engine disaggregated: the first token's fixed part per request is transfer_latency's")
	} else {
		f.kept("request_overhead", "the server reported no prompt time of its own (llama-server's timings) for every request: its work outside the steps is in the prefill terms")
	}
	chunks := func(t float64) float64 { return math.Ceil(t / float64(p.PrefillChunkTokens)) }
	if p.EngineMode() == engine.EngineColocatedParallel {
		chunks = func(float64) float64 { return 1 } // a prompt's prefill is one of its own
	}
	toks := make([]float64, len(rows))
	for i, r := range rows {
		toks[i] = r.computed
	}
	perRequest := disagg && chunks(slices.Max(toks)) > chunks(slices.Min(toks))+1
	cols := func(r row, attn bool) []float64 {
		x := []float64{chunks(r.computed), r.computed}
		if disagg && !perRequest {
			x[0] = 1
		}
		if attn {
			x = append(x, r.computed*(r.cached+r.computed/2))
		}
		if perRequest {
			x = append(x, 1)
		}
		return x
	}
	y := make([]float64, len(rows))
	for i, r := range rows {
		y[i] = r.y
	}
	fitWith := func(attn bool) (lsq, [][]float64, error) {
		x := make([][]float64, len(rows))
		for i, r := range rows {
			x[i] = cols(r, attn)
		}
		fit, err := fitLSQ(x, y)
		return fit, x, err
	}
	fit, x, err := fitWith(true)
	if err == nil {
		// A request that took more than twice what the first fit predicts met a slow moment of
		// the machine's (on this project's llama-server a next turn over 1 024 tokens took
		// 180 ms where the slower of two over 2 048 took 79, docs/calibrate.md §2): it is left
		// out of the fit.
		var slow []int
		for i := range rows {
			if pred := dot(fit.beta, x[i]); y[i] > 2*pred {
				slow = append(slow, i)
			}
		}
		if len(slow) > 0 && len(rows)-len(slow) >= len(fit.beta)+2 {
			for _, i := range slices.Backward(slow) {
				if i >= len(rows)-turns {
					turns--
				}
				rows, y = slices.Delete(rows, i, i+1), slices.Delete(y, i, i+1)
				if serverTimed {
					ttfts, totals = slices.Delete(ttfts, i, i+1), slices.Delete(totals, i, i+1)
				}
			}
			src += fmt.Sprintf(", %s left out (over twice the first fit's time)", plural.Of(len(slow), "slow request"))
			toks = toks[:0]
			for _, r := range rows {
				toks = append(toks, r.computed)
			}
			fit, x, err = fitWith(true)
		}
	}
	if err == nil && (fit.beta[2] <= 2*fit.se[2] || fit.beta[2]*slices.Max(toks)*slices.Max(toks)/2 < 0.02*slices.Max(y)) {
		// The attention term is not seen: fit without it.
		if fit, x, err = fitWith(false); err == nil {
			fit.beta = slices.Insert(fit.beta, 2, 0)
			fit.se = slices.Insert(fit.se, 2, 0)
			for i := range x {
				x[i] = slices.Insert(x[i], 2, 0)
			}
		}
	}
	if err != nil {
		f.Notes = append(f.Notes, "prefill fit: "+err.Error())
		return
	}
	f.setPrefill(fit, perRequest, src)
	pred := make([]float64, len(y))
	for i := range y {
		pred[i] = dot(fit.beta, x[i])
	}
	if !serverTimed {
		f.Errors = append(f.Errors, ExpError{Exp: ExpPrompt, What: "TTFT at batch 1", Points: len(byPoint), RMS: rmsRel(pred, y), Spread: spread(byPoint)})
		return
	}
	f.serverOverhead(ttfts, y, totals, strings.TrimPrefix(src, "the server's own prompt time (timings.prompt_ms) of "))
	ttftPred := make([]float64, len(pred))
	for i := range pred {
		ttftPred[i] = pred[i] + p.Admission(int(totals[i])).Seconds()
	}
	n := len(rows) - turns // the prompt lengths' rows, then the turns'
	f.Errors = append(f.Errors,
		ExpError{Exp: ExpPrompt, What: "server prompt time at batch 1", Points: len(byPoint), RMS: rmsRel(pred[:n], y[:n]), Spread: spread(onlyPoints(timedBy, true))},
		ExpError{Exp: ExpPrompt, What: "TTFT at batch 1", Points: len(byPoint), RMS: rmsRel(ttftPred[:n], ttfts[:n]), Spread: spread(byPoint)})
	if turns > 0 {
		f.Errors = append(f.Errors,
			ExpError{Exp: ExpTurn, What: "server prompt time of the turn", Points: len(turnTTFT), RMS: rmsRel(pred[n:], y[n:]), Spread: spread(onlyPoints(timedBy, false))},
			ExpError{Exp: ExpTurn, What: "TTFT of the turn", Points: len(turnTTFT), RMS: rmsRel(ttftPred[n:], ttfts[n:]), Spread: spread(turnTTFT)})
	}
}

// onlyPoints keeps the prompt lengths' points of timedBy (keys ≥ 0) or the next turns' (< 0).
func onlyPoints(by map[int][]float64, prompts bool) map[int][]float64 {
	out := map[int][]float64{}
	for k, v := range by {
		if (k >= 0) == prompts {
			out[k] = v
		}
	}
	return out
}

// serverOverhead fits request_overhead and request_overhead_per_token: each prompt-length
// request's TTFT less the server's own prompt time is the work the server does for it outside
// its steps (reading it, the chat template, tokenizing, sending the first chunk), which grows
// with the whole prompt, cached or not (llama-server: about 4 ms at 60 tokens to 20–30 ms at
// 6 700 on this project's machine, docs/calibrate.md §2). A request whose rest is more than
// twice the first fit's is a slow moment of the machine's and is left out of the second. A
// slope under two standard errors is not seen: the rest is then a median, per request.
func (f *Fit) serverOverhead(ttft, prompt, tokens []float64, of string) {
	p := f.Profile
	rest := make([]float64, len(ttft))
	for i := range ttft {
		rest[i] = max(ttft[i]-prompt[i], 1e-6)
	}
	src := "TTFT less the server's own prompt time (timings.prompt_ms) of " + of
	fitRest := func(use func(i int) bool) (lsq, int, error) {
		var x [][]float64
		var y []float64
		for i := range rest {
			if use(i) {
				x, y = append(x, []float64{1, tokens[i]}), append(y, rest[i])
			}
		}
		fit, err := fitLSQ(x, y)
		return fit, len(y), err
	}
	fit, n, err := fitRest(func(int) bool { return true })
	if err == nil {
		fit, n, err = fitRest(func(i int) bool { return rest[i] <= 2*(fit.beta[0]+fit.beta[1]*tokens[i]) })
	}
	if err != nil || fit.beta[1] <= 2*fit.se[1] || fit.beta[0] < 0 {
		sorted := slices.Sorted(slices.Values(rest))
		p.RequestOverhead, p.RequestOverheadPerToken = seconds(sorted[len(sorted)/2]), 0
		f.fitted("request_overhead", p.RequestOverhead.String(), seconds(1.2533*stddev(rest)/math.Sqrt(float64(len(rest)))).String(),
			fmt.Sprintf("%s, their median (%s–%s): no growth with the prompt seen", src, seconds(sorted[0]).Round(time.Microsecond), seconds(sorted[len(sorted)-1]).Round(time.Microsecond)))
		f.fitted("request_overhead_per_token", "0", "-", src+": no growth with the prompt seen")
		return
	}
	if n < len(rest) {
		src += fmt.Sprintf(", %s left out", plural.Of(len(rest)-n, "slow request"))
	}
	p.RequestOverhead, p.RequestOverheadPerToken = seconds(fit.beta[0]), seconds(fit.beta[1])
	f.fitted("request_overhead", p.RequestOverhead.String(), seconds(fit.se[0]).String(), src+": fixed part")
	f.fitted("request_overhead_per_token", p.RequestOverheadPerToken.String(), seconds(fit.se[1]).String(), src+": per prompt token")
}

// setPrefill writes the prefill fit (per chunk, per token, attention, and with perRequest a
// fixed part per request) into the profile.
func (f *Fit) setPrefill(fit lsq, perRequest bool, src string) {
	p := f.Profile
	fixed, fixedSE := seconds(fit.beta[0]), seconds(fit.se[0]).String()
	switch {
	case p.EngineMode() == engine.EngineColocatedMixed:
		// A prefill-only step carries the forward pass's fixed cost, decode_base.
		p.PrefillBase = max(fixed-p.DecodeBase, 0)
		f.fitted("prefill_base", p.PrefillBase.String(), fixedSE, src+": fixed cost per chunk less decode_base")
	case p.EngineMode() == engine.EngineColocatedAlternating:
		p.PrefillBase = max(fixed, 0)
		f.fitted("prefill_base", p.PrefillBase.String(), fixedSE, src+": fixed cost per chunk")
	case p.EngineMode() == engine.EngineColocatedParallel:
		p.PrefillBase = max(fixed, 0)
		f.fitted("prefill_base", p.PrefillBase.String(), fixedSE, src+": fixed cost per request")
	case perRequest:
		p.PrefillBase = max(fixed, 0)
		f.fitted("prefill_base", p.PrefillBase.String(), fixedSE, src+": fixed cost per chunk")
		// The fixed part per request is the transfer and the first decode step: what the
		// base's transfer_serial and that step do not explain is the transfer's latency.
		whole := seconds(fit.beta[3])
		p.TransferLatency = max(whole-p.TransferSerial-p.DecodeStep(1, 0), 0)
		f.fitted("transfer_latency", p.TransferLatency.String(), seconds(fit.se[3]).String(), fmt.Sprintf(
			"%s: the first token's fixed part per request (%s) less the base's transfer_serial and one decode step", src, whole.Round(time.Microsecond)))
		f.kept("transfer_per_token_ns", "not separable from the prefill per token at batch 1")
	default:
		// The fixed part is prefill_base + transfer_serial + transfer_latency + one decode
		// step, not separable at batch 1: the base's prefill_base is kept where it fits, and
		// transfer_latency takes the rest, so the first token's fixed cost is the measured one.
		room := max(fixed-p.TransferSerial-p.DecodeStep(1, 0), 0)
		p.PrefillBase = min(p.PrefillBase, room)
		p.TransferLatency = room - p.PrefillBase
		f.fitted("transfer_latency", p.TransferLatency.String(), fixedSE, fmt.Sprintf(
			"%s: the first token's fixed part (%s) less prefill_base (%s), transfer_serial and one decode step", src, fixed.Round(time.Microsecond), p.PrefillBase))
		f.kept("prefill_base, transfer_per_token_ns", "not separable from the transfer at batch 1: the base's kept where it fits")
	}
	if fit.beta[1] < 0 {
		// Noise the fit could not see through: a cost cannot be negative.
		p.PrefillPerToken = 0
		f.fitted("prefill_per_token", "0", seconds(fit.se[1]).String(), fmt.Sprintf("%s: fitted %s, below 0, so not identified", src, seconds(fit.beta[1])))
	} else {
		p.PrefillPerToken = seconds(fit.beta[1])
		f.fitted("prefill_per_token", p.PrefillPerToken.String(), seconds(fit.se[1]).String(), src)
	}
	p.PrefillAttnPerToken2Ns = round(fit.beta[2]*1e9, 4)
	if fit.beta[2] == 0 {
		f.fitted("prefill_attn_per_token2_ns", "0", "-", src+": indistinguishable from 0")
		return
	}
	f.fitted("prefill_attn_per_token2_ns", fmt.Sprintf("%.4g", fit.beta[2]*1e9), fmt.Sprintf("%.2g", fit.se[2]*1e9), src)
}

// prefixCache reads the repeated-prefix probe: a prefix cache answers the repeated first
// message, so its TTFT falls from the fresh prompt's towards the shortest prompt's (the
// server's fixed cost): more than half the way is a prefix cache.
func (f *Fit) prefixCache(d *Data, ratio float64) {
	ms := d.Of(ExpPrefix)
	p := f.Profile
	if len(ms) == 0 {
		f.kept("prefix_cache_tokens", "the repeated-prefix probe did not run")
		return
	}
	fresh, again := prefixTTFTs(ms[0])
	floor := floorOf(d)
	if fresh <= floor {
		f.kept("prefix_cache_tokens", fmt.Sprintf("repeated prefix: the fresh prompt's TTFT (%s) was not above the shortest prompt's (%s), so the probe measured nothing: the base's kept",
			fresh.Round(time.Microsecond), floor.Round(time.Microsecond)))
		return
	}
	saved := (fresh - again).Seconds() / (fresh - floor).Seconds()
	src := fmt.Sprintf("repeated prefix: TTFT %s against %s fresh and %s for the shortest prompt (%.0f %% of the prefill saved)",
		again.Round(time.Microsecond), fresh.Round(time.Microsecond), floor.Round(time.Microsecond), 100*saved)
	lo, hi, sized := sizeBounds(d, ratio)
	switch {
	case !cacheAnswered(fresh, again, floor):
		p.PrefixCacheTokens = 0
		f.fitted("prefix_cache_tokens", "0", "-", src+": no prefix cache")
	case sized && hi > 0:
		p.PrefixCacheTokens = int((lo + hi) / 2)
		f.fitted("prefix_cache_tokens", fmt.Sprint(p.PrefixCacheTokens), fmt.Sprintf("%.0f", (hi-lo)/2), fmt.Sprintf(
			"%s; prefix-size probe: a prefix was still answered after %.0f tokens in all, missed after %.0f", src, lo, hi))
	case sized && int(lo) > p.PrefixCacheTokens:
		p.PrefixCacheTokens = int(lo)
		f.fitted("prefix_cache_tokens", fmt.Sprint(p.PrefixCacheTokens), "lower bound", fmt.Sprintf(
			"%s; prefix-size probe: a prefix was still answered after %.0f tokens in all (the notes say why it stopped)", src, lo))
	case sized:
		f.kept("prefix_cache_tokens", fmt.Sprintf("%s; prefix-size probe: still answered after %.0f tokens, within the base's %d", src, lo, p.PrefixCacheTokens))
	case p.PrefixCacheTokens > 0:
		f.kept("prefix_cache_tokens", src+": a prefix cache; the prefix-size probe did not run (the notes say why), the base's size kept")
	default:
		p.PrefixCacheTokens = p.KVCapacityTokens
		f.fitted("prefix_cache_tokens", fmt.Sprint(p.PrefixCacheTokens), "size not measured", src+": a prefix cache, as large as the KV pool (the prefix-size probe did not run)")
	}
}

// kv reads the KV pool: a request failed mid-stream with llama.cpp's "Context size has been
// exceeded." makes kv_full fail, its pool the KV running when it failed; a KV probe that
// completed is a lower bound. It reports whether it measured the pool's size (a failure).
func (f *Fit) kv(d *Data, ratio float64) bool {
	p := f.Profile
	// A point none of whose requests completed counts too: a pool that fills fails them all.
	for _, m := range slices.Concat(d.Points, d.Refused) {
		for _, run := range m.Runs {
			at, ok := kvFailure(run)
			if !ok {
				continue
			}
			// The requests decoding when the pool failed held their prompts and tokens so far;
			// one still prefilling held part of its prompt, which is what did not fit.
			used, pending, waiting := 0.0, 0.0, 0
			for _, o := range run {
				n := 0
				for _, t := range o.Chunks {
					if t.Before(at) {
						n++
					}
				}
				switch {
				case n > 0 || o.OK():
					used += promptTokens(&o, ratio) + float64(n)
				case strings.Contains(o.Err, engine.ContextExceeded):
					pending, waiting = max(pending, promptTokens(&o, ratio)), waiting+1
				}
			}
			p.KVFull = engine.KVFullFail
			f.fitted("kv_full", "fail", "-", fmt.Sprintf("%s: requests failed mid-stream with %q", m.Point, engine.ContextExceeded))
			if waiting == 0 {
				p.KVCapacityTokens = int(used)
				f.fitted("kv_capacity_tokens", fmt.Sprint(p.KVCapacityTokens), "≈ one step's growth", "the KV running when they failed")
				return true
			}
			p.KVCapacityTokens = int(used + pending/2)
			f.fitted("kv_capacity_tokens", fmt.Sprint(p.KVCapacityTokens), fmt.Sprintf("%.0f", pending/2), fmt.Sprintf(
				"the KV running when they failed (%.0f tokens) and half the prompt one of %d requests still prefilling had when it did not fit (up to %.0f tokens)", used, waiting, pending))
			return true
		}
	}
	ms := d.Of(ExpKV)
	if len(ms) == 0 {
		f.kept("kv_capacity_tokens, kv_full", "the KV probe did not run and no request failed for KV")
		return false
	}
	bound := heldAtOnce(ms[0].OK(), ratio)
	if int(bound) > p.KVCapacityTokens {
		p.KVCapacityTokens = int(bound)
		f.fitted("kv_capacity_tokens", fmt.Sprint(int(bound)), "lower bound", fmt.Sprintf("%s held %.0f tokens without a failure", ms[0].Point, bound))
		return false
	}
	f.kept("kv_capacity_tokens, kv_full", fmt.Sprintf("%s held %.0f tokens without a failure: within the base's %d", ms[0].Point, bound, p.KVCapacityTokens))
	return false
}

// heldAtOnce is the most KV the requests held at one moment, a lower bound of the pool: at each
// request's last chunk, the prompts and the chunks so far of every request decoding then. A
// server that queued some of them for KV held only those running together, not their sum.
func heldAtOnce(obs []Obs, ratio float64) float64 {
	var most float64
	for _, at := range obs {
		t := at.Chunks[len(at.Chunks)-1]
		var held float64
		for _, o := range obs {
			if o.Chunks[0].After(t) || o.Chunks[len(o.Chunks)-1].Before(t) {
				continue
			}
			n, at := slices.BinarySearchFunc(o.Chunks, t, func(c, t time.Time) int { return c.Compare(t) })
			if at {
				n++ // the chunk at t itself
			}
			held += promptTokens(&o, ratio) + float64(n)
		}
		most = max(most, held)
	}
	return most
}

// kvFailure is when the first request of a run failed for KV.
func kvFailure(run []Obs) (time.Time, bool) {
	for _, o := range run {
		if o.MidStream && strings.Contains(o.Err, "Context size has been exceeded") {
			return o.Done, true
		}
	}
	return time.Time{}, false
}

// context reads the longest prompt the server took and the shortest it refused.
func (f *Fit) context(d *Data, ratio float64) {
	longest := 0
	for _, m := range d.Of(ExpPrompt) {
		for _, o := range m.OK() {
			longest = max(longest, int(promptTokens(&o, ratio))+o.Tokens())
		}
	}
	refused := 0
	for _, reasons := range d.Skipped[ExpPrompt] {
		// A refusal skips its point whole; partial failures and the budget are not refusals.
		if !strings.Contains(reasons, "not sent") && !strings.Contains(reasons, "budget") &&
			!strings.Contains(reasons, "some requests failed") && !strings.Contains(reasons, "a repeat failed") {
			refused++
		}
	}
	p := f.Profile
	if refused > 0 && longest > 0 && longest < p.MaxContextTokens {
		p.MaxContextTokens = longest
		f.fitted("max_context_tokens", fmt.Sprint(longest), "lower bound", "the longest prompt the server took; a longer one was refused")
		return
	}
	f.kept("max_context_tokens", fmt.Sprintf("no prompt was refused (the longest taken: %d tokens)", longest))
}

// dot is the sum of a[i]·b[i].
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
