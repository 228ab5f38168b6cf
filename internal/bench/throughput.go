package bench

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/agentsim/agentsim/agents"
)

// steadyFraction defines the steady decode phase: the time during which at least this fraction
// of the peak number of streams were decoding at once.
const steadyFraction = 0.9

// Decode is the aggregate output rate of a test over its steady decode phase — what an operator
// reads as "the server's decode throughput at this concurrency". A stream is decoding from its
// first token to its last byte (client side); the phase is the time during which at least
// Threshold = ⌈0.9 × Peak⌉ streams were decoding at once, so it leaves out the ramp-up while
// prefill and KV transfer are still admitting requests and the tail while the batch drains.
// Tokens within the phase are counted from each stream's frame arrivals after its first,
// interpolated between frames and scaled so that each stream's frames add up to its
// usage.completion_tokens.
type Decode struct {
	// TokPerS is the aggregate output rate during the phase, in tokens per simulated second.
	TokPerS float64
	// Peak is the most streams decoding at once; Threshold the fewest counted as steady.
	Peak, Threshold int
	// FromS and ToS bound the phase, in simulated seconds since the test started (the phase
	// may have gaps when the count dipped below Threshold).
	FromS, ToS float64
}

// edge is a stream starting (+1) or ending (−1) its decoding at t.
type edge struct {
	t     time.Time
	delta int
}

// Decode measures the test's steady decode phase. With no stream that decoded for a positive
// time it returns the zero Decode.
func (p *Point) Decode() Decode {
	var edges []edge
	var prog []progress
	for i, c := range p.Calls {
		first := c.FirstToken()
		if first.IsZero() || !c.Last.After(first) {
			continue
		}
		edges = append(edges, edge{first, +1}, edge{c.Last, -1})
		prog = append(prog, newProgress(p.chunks[i], first, c))
	}
	if len(edges) == 0 {
		return Decode{}
	}
	// Ends before starts at the same instant: two streams that merely touch never overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	return p.steady(edges, prog)
}

// steady sums the tokens of every stream over the segments where at least ⌈0.9 × peak⌉
// streams were decoding.
func (p *Point) steady(edges []edge, prog []progress) Decode {
	counts := make([]int, len(edges)) // streams decoding from edges[i].t to edges[i+1].t
	peak, cur := 0, 0
	for i, e := range edges {
		cur += e.delta
		counts[i] = cur
		peak = max(peak, cur)
	}
	d := Decode{Peak: peak, Threshold: int(math.Ceil(steadyFraction * float64(peak)))}
	var tokens, seconds float64
	var from, to time.Time
	for i := 0; i+1 < len(edges); i++ {
		a, b := edges[i].t, edges[i+1].t
		if counts[i] < d.Threshold || !b.After(a) {
			continue
		}
		if from.IsZero() {
			from = a
		}
		to = b
		seconds += b.Sub(a).Seconds()
		for _, g := range prog {
			tokens += g.at(b) - g.at(a)
		}
	}
	if seconds > 0 {
		d.TokPerS = tokens / seconds
		d.FromS, d.ToS = from.Sub(p.Start).Seconds(), to.Sub(p.Start).Seconds()
	}
	return d
}

// progress is one stream's output received over time: the arrival of each data frame from its
// first token on, each worth per tokens, at most total in all.
type progress struct {
	times []time.Time
	per   float64
	total float64
}

// newProgress builds a stream's progress from its frame arrivals and its call's result. The
// frames counted run from the first token to the end, less the usage frame and the [DONE]
// terminator of a completed call; each carries at least one token, and when the server packed
// several tokens into a frame, per spreads usage.completion_tokens over the frames (the finish
// frame, where a server sends one apart, makes that a frame's worth too low). Without usage
// each frame counts one token.
func newProgress(chunks []time.Time, first time.Time, c agents.Result) progress {
	i := sort.Search(len(chunks), func(k int) bool { return !chunks[k].Before(first) })
	end := len(chunks)
	if c.OK() {
		end-- // [DONE]
		if c.Usage.Completion > 0 {
			end-- // the usage frame
		}
	}
	g := progress{times: chunks[i:max(i, end)], per: 1}
	g.total = float64(len(g.times))
	if c.Usage.Completion > 0 && len(g.times) > 0 {
		g.total = float64(c.Usage.Completion)
		g.per = max(1, g.total/float64(len(g.times)))
	}
	return g
}

// at returns the tokens received after the first frame and by t, interpolating linearly
// between frame arrivals. The first frame's tokens are left out: they arrive at the very instant
// the stream starts decoding, and counting them would credit a stream that has only begun with
// tokens it has not yet been decoding for.
func (g progress) at(t time.Time) float64 {
	n := len(g.times)
	i := sort.Search(n, func(k int) bool { return g.times[k].After(t) }) // frames at or before t
	if i == 0 {
		return 0
	}
	got := float64(i - 1)
	if i < n {
		prev, next := g.times[i-1], g.times[i]
		got += float64(t.Sub(prev)) / float64(next.Sub(prev))
	}
	return min(got*g.per, max(0, g.total-g.per))
}

// PerRequestTokPerS is the mean, over completed requests, of each request's completion tokens
// divided by its decode time (first token to last byte), in tokens per simulated second.
func (p *Point) PerRequestTokPerS() float64 {
	sum, n := 0.0, 0
	for _, c := range p.Calls {
		first := c.FirstToken()
		if !c.OK() || first.IsZero() || !c.Last.After(first) {
			continue
		}
		sum += float64(c.Usage.Completion) / c.Last.Sub(first).Seconds()
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// WholeTokPerS is every completion token received divided by the test's wall time (from
// sending to the end of the last request, prefill and ramp included), in tokens per simulated
// second — the figure benchmark clients such as vLLM's report as output throughput.
func (p *Point) WholeTokPerS() float64 {
	w := p.WallS()
	if w <= 0 {
		return 0
	}
	total := 0
	for _, c := range p.Calls {
		total += c.Usage.Completion
	}
	return float64(total) / w
}
