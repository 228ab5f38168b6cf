package calibrate

import (
	"context"
	"fmt"
	"time"
)

// maxFill is the most prompts the prefix-size probe sends between a prefix and its repeat.
const maxFill = 64

// probeShare bounds the prefix-size probe to 1/probeShare of the budget: its fills grow, and a
// slow server's may outrun the warm-up's estimates, which the later experiments' reserve uses.
const probeShare = 4

// prefixSize runs the prefix-size probe when the repeated-prefix probe found a prefix cache:
// a fresh prefix A, then n fresh prompts of its length, then A again with another question.
// An LRU cache of C tokens still answers A while A and the n prompts fit in it, so n doubles
// from 1 until A is missed twice (each time with a fresh A), then halves the gap between the
// last n that hit and the first that missed; each try is a point (Batch: n) whose one run holds
// A and its repeat. The probe stops
// at maxFill prompts, when the next fill would leave the experiments after it less than their
// planned time (reserve) within the budget, or would take the probe past 1/probeShare of the
// budget, with the bound it reached.
func (r *runner) prefixSize(ctx context.Context, ps []Point) {
	if len(ps) == 0 {
		return
	}
	p := ps[0]
	ms := r.d.Of(ExpPrefix)
	if len(ms) == 0 {
		r.d.skip(ExpPrefixSize, "the repeated-prefix probe did not run")
		return
	}
	fresh, again := prefixTTFTs(ms[0])
	if !cacheAnswered(fresh, again, r.floor()) {
		r.d.skip(ExpPrefixSize, "not run: the repeated prefix was not answered by a cache")
		return
	}
	hitBelow := (fresh + again) / 2
	hit, miss := 0, 0 // the largest n that hit, the smallest that missed (0: none yet)
	n := 1
	var last time.Duration // the last fill's time, of lastN prompts
	lastN := 0
	tried := map[int]bool{} // fills that missed once
	began := r.o.Client.Clock.Now()
	// The probe is one point of the plan, however many fills it takes.
	r.points++
	for n > hit && (miss == 0 || n < miss) {
		if n > maxFill {
			r.d.skip(ExpPrefixSize, fmt.Sprintf("stopped at %d prompts between a prefix and its repeat, still answered: the cache holds at least that", maxFill))
			return
		}
		cost := time.Duration(n+2) * (r.ttft + time.Duration(p.Prompt)*r.perTok)
		if last > 0 {
			// The last fill's time, scaled to this one's requests, where it is longer.
			cost = max(cost, last*time.Duration(n+2)/time.Duration(lastN+2))
		}
		if r.o.Client.Clock.Since(r.start)+cost+r.reserve > r.o.Budget {
			r.d.skip(ExpPrefixSize, fmt.Sprintf("stopped before %d prompts between a prefix and its repeat: the budget of %s would not leave the experiments after it their time", n, r.o.Budget))
			return
		}
		if r.o.Client.Clock.Since(began)+cost > r.o.Budget/probeShare {
			r.d.skip(ExpPrefixSize, fmt.Sprintf("stopped before %d prompts between a prefix and its repeat: the probe may take 1/%d of the budget of %s", n, probeShare, r.o.Budget))
			return
		}
		at := r.o.Client.Clock.Now()
		run, err := r.fillBetween(ctx, p, n)
		last, lastN = r.o.Client.Clock.Since(at), n
		if err != "" {
			r.d.skip(ExpPrefixSize, fmt.Sprintf("%d prompts between: %s", n, err))
			r.printf("[%d/%d] %s fill=%d: skipped: %s\n", r.points, r.total, p.Exp, n, err)
			return
		}
		answered, why := repeatAnswered(&run[1], hitBelow)
		r.d.Points = append(r.d.Points, Measured{Point: Point{Exp: ExpPrefixSize, Batch: n, Prompt: p.Prompt, Output: p.Output, Repeats: 1}, Runs: [][]Obs{run}})
		r.printf("[%d/%d] %s fill=%d: %s: %s (%s; %s of about %s)\n", r.points, r.total, p.Exp, n,
			why, map[bool]string{true: "answered", false: "missed"}[answered],
			r.o.Client.Clock.Since(at).Round(time.Millisecond), r.o.Client.Clock.Since(r.start).Round(time.Second), r.planned.Round(time.Second))
		switch {
		case answered:
			hit = n
		case !tried[n]:
			// A slow moment can make a hit look like a miss, never a miss like a hit: a miss
			// counts once a fresh prefix has missed at this fill twice.
			tried[n] = true
			continue
		default:
			miss = n
		}
		if miss == 0 {
			n *= 2
		} else {
			n = (hit + miss) / 2
		}
	}
}

// repeatAnswered reports whether the cache answered a prefix-size try's repeat, and what
// said so. Where the server reports its own timings (llama-server's cache_n, prompt_n), they
// decide: the cache answered the repeat if it supplied at least half of its prompt. The
// repeat's TTFT cannot tell there, for llama-server saves the fills' idle slots to its RAM
// cache as it launches the repeat (launch_per_idle_token, docs/engine.md §4): in three
// calibrations of this project's llama-server, repeats after 7 and 8 fills of 2 048 tokens
// took 91–113 ms against thresholds of 85–93 ms, though each computed 7 tokens, its cache
// supplying the rest (docs/calibrate.md §1). Elsewhere the repeat is answered when its TTFT
// is under hitBelow.
func repeatAnswered(repeat *Obs, hitBelow time.Duration) (bool, string) {
	if s := repeat.Server; s != nil && s.Computed+s.Cached > 0 {
		return 2*s.Cached >= s.Computed+s.Cached, fmt.Sprintf("the repeat computed %d tokens, %d came from the server's cache (a hit takes half or more)", s.Computed, s.Cached)
	}
	return repeat.TTFT() < hitBelow, fmt.Sprintf("TTFT of the repeat %s (a hit is under %s)", repeat.TTFT().Round(time.Microsecond), hitBelow.Round(time.Microsecond))
}

// fillBetween sends a fresh prefix, n fresh prompts of its length (as many at once as the
// server runs), and the prefix again with another question; it returns the prefix's two
// requests, or the first error.
func (r *runner) fillBetween(ctx context.Context, p Point, n int) ([]Obs, string) {
	text, est := prompt(r.o.Seed, r.next, p.Prompt)
	r.next++
	ask := func(q string) Obs {
		return r.o.Client.Send(ctx, Request{Messages: []string{text, "ok", q}, Estimate: est + 2*messageFraming + 1 + 4, MaxTokens: p.Output})
	}
	first := ask("and the first question")
	if !first.OK() {
		return nil, first.Err
	}
	for left := n; left > 0; {
		k := min(left, max(r.running, 1))
		for _, o := range r.batchOf(ctx, k, p.Prompt, p.Output) {
			if !o.OK() {
				return nil, o.Err
			}
		}
		left -= k
	}
	repeat := ask("and the second question")
	if !repeat.OK() {
		return nil, repeat.Err
	}
	return []Obs{first, repeat}, ""
}

// floor is the server's fixed cost: the median TTFT of the shortest prompt-length point, 0
// when none ran.
func (r *runner) floor() time.Duration { return floorOf(r.d) }

// floorOf is the median TTFT of the data's shortest prompt-length point, 0 when none ran.
func floorOf(d *Data) time.Duration {
	if short := d.Of(ExpPrompt); len(short) > 0 && len(short[0].OK()) > 0 {
		return median(short[0].OK(), (*Obs).TTFT)
	}
	return 0
}

// cacheAnswered reports whether a repeated prefix saved more than half the fresh prompt's
// prefill (its TTFT above the floor).
func cacheAnswered(fresh, again, floor time.Duration) bool {
	return fresh > floor && (fresh-again).Seconds()/(fresh-floor).Seconds() >= 0.5
}

// sizeBounds reads the prefix-size probe: the cache holds the prefix and the prompts sent
// between while it still answers, so it is at least the prefix and hit prompts and, when a
// larger fill missed, under the prefix and miss prompts, in server tokens (the prefix's usage,
// the prompts' estimate × ratio). ok is false when the probe did not run; hi is 0 when no fill
// missed.
func sizeBounds(d *Data, ratio float64) (lo, hi float64, ok bool) {
	ms := d.Of(ExpPrefixSize)
	pm := d.Of(ExpPrefix)
	if len(ms) == 0 || len(pm) == 0 {
		return 0, 0, false
	}
	fresh, again := prefixTTFTs(pm[0])
	hitBelow := (fresh + again) / 2
	answered := map[int]bool{} // per fill, whether any try was answered
	var prefix, each float64
	for _, m := range ms {
		run := m.Runs[0]
		prefix, each = promptTokens(&run[0], ratio), float64(m.Point.Prompt)*ratio
		a, _ := repeatAnswered(&run[1], hitBelow)
		answered[m.Point.Batch] = answered[m.Point.Batch] || a
	}
	hit, miss := 0, 0
	for n, a := range answered {
		switch {
		case a:
			hit = max(hit, n)
		case miss == 0 || n < miss:
			miss = n
		}
	}
	lo = prefix + float64(hit)*each
	if miss > 0 {
		hi = prefix + float64(miss)*each
	}
	return lo, hi, true
}
