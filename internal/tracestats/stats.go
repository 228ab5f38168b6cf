// Package tracestats summarises a trace: its sessions, context growth, token and think-time
// distributions, concurrency over time, prefix reuse and its tool loop (tools.go). An Accumulator takes requests one at
// a time (as trace.Reader gives them); rendering lives in render.go.
package tracestats

import (
	"math"
	"sort"
	"strconv"

	"github.com/agentsim/agentsim/trace"
)

// Dist is a distribution's summary. Quantiles are nearest-rank; all zero when N is 0.
type Dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

// Summary is what `agentsim trace show` prints. Durations are in seconds (fields ending _s),
// token counts in tokens.
type Summary struct {
	Source  string `json:"source"`
	Created string `json:"created,omitempty"`

	Requests int `json:"requests"`
	Sessions int `json:"sessions"`
	// DurationS runs from the first send to the last end (the last send when the trace has no
	// outcomes).
	DurationS float64 `json:"duration_s"`

	RequestsPerSession Dist `json:"requests_per_session"`
	// ContextGrowth is per session: the first and last prompt, and their difference for
	// sessions of more than one request.
	ContextGrowth ContextGrowth `json:"context_growth"`

	Tokens Tokens `json:"tokens"`
	// TokensEstimated counts requests whose token counts are estimates or unknown.
	TokensEstimated int `json:"tokens_estimated"`

	// ThinkTimeS is the distribution of after_s over requests after a session's first, in
	// seconds, measured from the previous request's end or send (AfterSFrom).
	ThinkTimeS Dist   `json:"think_time_s"`
	AfterSFrom string `json:"after_s_from"`

	// Concurrency is nil when no request has an e2e_s; ConcurrencyNote says why.
	Concurrency     *Concurrency `json:"concurrency"`
	ConcurrencyNote string       `json:"concurrency_note,omitempty"`

	PrefixReuse PrefixReuse `json:"prefix_reuse"`

	// Status counts requests by HTTP status ("unknown" when the trace does not say).
	Status map[string]int `json:"status"`

	// Tools is the tool loop's summary; nil (absent) when no request offered tools or made a
	// tool call.
	Tools *Tools `json:"tools,omitempty"`
}

// ContextGrowth describes how prompts grow within sessions, in tokens.
type ContextGrowth struct {
	FirstPromptTokens Dist `json:"first_prompt_tokens"`
	LastPromptTokens  Dist `json:"last_prompt_tokens"`
	GrowthTokens      Dist `json:"growth_tokens"`
	NewTokens         Dist `json:"new_tokens"` // per request that extends an earlier one
}

// Tokens are per-request token distributions.
type Tokens struct {
	Prompt    Dist `json:"prompt"`
	Cached    Dist `json:"cached"`
	Output    Dist `json:"output"`
	Reasoning Dist `json:"reasoning"`
}

// Concurrency is the number of requests in flight (between send and end) over the trace:
// time-weighted mean and maximum, over the requests that have an e2e_s.
type Concurrency struct {
	Mean     float64 `json:"mean"`
	Max      int     `json:"max"`
	Requests int     `json:"requests"` // how many requests had an outcome to count
}

// PrefixReuse says how much of the prompts repeats earlier ones.
type PrefixReuse struct {
	// ExtendingRequests continue an earlier request's conversation (extends).
	ExtendingRequests int `json:"extending_requests"`
	// ConversationTokensFraction is the share of all prompt tokens that repeat an extended
	// conversation (prompt_tokens − new_tokens of extending requests).
	ConversationTokensFraction float64 `json:"conversation_tokens_fraction"`
	// CachedTokensFraction is the share of prompt tokens the server reported cached.
	CachedTokensFraction float64 `json:"cached_tokens_fraction"`
	// HashBlocks counts hash_ids over all requests; SeenBeforeFraction is the share of them
	// that appeared in an earlier request (a prefix cache of unbounded size would hit them).
	HashBlocks         int     `json:"hash_blocks"`
	SeenBeforeFraction float64 `json:"hash_blocks_seen_before_fraction"`
}

// Accumulator builds a Summary from requests added one at a time. It keeps a few numbers per
// request (for the quantiles and the concurrency sweep) and per session, never the requests.
type Accumulator struct {
	header trace.Header
	n      int
	first  float64 // earliest send
	last   float64 // latest send or end

	sessions                           map[string]*session
	prompt, cached, output, reasoning  []float64
	think, newTokens                   []float64
	estimated, extending               int
	promptSum, cachedSum, conversation float64
	intervals                          [][2]float64 // send and end of requests with an e2e_s
	seen                               map[uint64]struct{}
	blocks, seenBefore                 int
	status                             map[string]int
	tools                              toolAcc
}

type session struct {
	n                   int
	firstPrompt, prompt int
	task                int // requests of its open task so far
}

// New returns an Accumulator for the trace with header h.
func New(h trace.Header) *Accumulator {
	return &Accumulator{header: h, sessions: map[string]*session{}, seen: map[uint64]struct{}{}, status: map[string]int{}}
}

// Add counts one request.
func (a *Accumulator) Add(r trace.Request) {
	if a.n == 0 || r.TS < a.first {
		a.first = r.TS
	}
	a.n++
	end := r.TS + r.E2ES
	a.last = math.Max(a.last, end)
	if r.E2ES > 0 {
		a.intervals = append(a.intervals, [2]float64{r.TS, end})
	}
	s := a.sessions[r.Session]
	if s == nil {
		s = &session{firstPrompt: r.PromptTokens}
		a.sessions[r.Session] = s
	}
	s.n++
	s.prompt = r.PromptTokens
	a.prompt = append(a.prompt, float64(r.PromptTokens))
	a.cached = append(a.cached, float64(r.CachedTokens))
	a.output = append(a.output, float64(r.OutputTokens))
	a.reasoning = append(a.reasoning, float64(r.ReasoningTokens))
	if r.Seq > 0 {
		a.think = append(a.think, r.AfterS)
	}
	if r.TokensEstimated {
		a.estimated++
	}
	a.promptSum += float64(r.PromptTokens)
	a.cachedSum += float64(r.CachedTokens)
	if r.Extends != nil {
		a.extending++
		a.newTokens = append(a.newTokens, float64(r.NewTokens))
		a.conversation += float64(r.PromptTokens - r.NewTokens)
	}
	for _, id := range r.HashIDs {
		a.blocks++
		if _, ok := a.seen[id]; ok {
			a.seenBefore++
		}
	}
	for _, id := range r.HashIDs { // after counting, so a request does not reuse itself
		a.seen[id] = struct{}{}
	}
	a.tools.add(&r, s)
	st := "unknown"
	if r.Status != 0 {
		st = strconv.Itoa(r.Status)
	}
	a.status[st]++
}

// Summary returns the summary of the requests added so far.
func (a *Accumulator) Summary() Summary {
	s := Summary{Source: a.header.Source, Created: a.header.Created, Requests: a.n, Sessions: len(a.sessions), Status: a.status}
	if a.n > 0 {
		s.DurationS = a.last - a.first
	}
	var per, first, last, growth []float64
	open := 0
	for _, ss := range a.sessions {
		if ss.task > 0 {
			open++
		}
		per = append(per, float64(ss.n))
		first = append(first, float64(ss.firstPrompt))
		last = append(last, float64(ss.prompt))
		if ss.n > 1 {
			growth = append(growth, float64(ss.prompt-ss.firstPrompt))
		}
	}
	s.RequestsPerSession = dist(per)
	s.ContextGrowth = ContextGrowth{dist(first), dist(last), dist(growth), dist(a.newTokens)}
	s.Tokens = Tokens{dist(a.prompt), dist(a.cached), dist(a.output), dist(a.reasoning)}
	s.TokensEstimated = a.estimated
	s.ThinkTimeS = dist(a.think)
	s.AfterSFrom = a.header.AfterSFrom
	if s.AfterSFrom == "" {
		s.AfterSFrom = trace.AfterEnd
	}
	s.Concurrency, s.ConcurrencyNote = a.concurrency()
	s.PrefixReuse = PrefixReuse{ExtendingRequests: a.extending, HashBlocks: a.blocks}
	if a.promptSum > 0 {
		s.PrefixReuse.ConversationTokensFraction = a.conversation / a.promptSum
		s.PrefixReuse.CachedTokensFraction = a.cachedSum / a.promptSum
	}
	if a.blocks > 0 {
		s.PrefixReuse.SeenBeforeFraction = float64(a.seenBefore) / float64(a.blocks)
	}
	s.Tools = a.tools.summary(open)
	return s
}

// concurrency sweeps the requests' [send, end] intervals: the time-weighted mean over the
// span they cover, and the maximum.
func (a *Accumulator) concurrency() (*Concurrency, string) {
	if len(a.intervals) == 0 {
		return nil, "the trace has no outcomes (no e2e_s): it says when requests were sent, not when they ended"
	}
	c := &Concurrency{Requests: len(a.intervals)}
	c.Mean, c.Max = Sweep(a.intervals)
	note := ""
	if len(a.intervals) < a.n {
		note = strconv.Itoa(a.n-len(a.intervals)) + " requests without an e2e_s are not counted"
		if a.n-len(a.intervals) == 1 {
			note = "1 request without an e2e_s is not counted"
		}
	}
	return c, note
}

// Sweep returns the number of [send, end] intervals in flight over the span from the first
// send to the last end: its time-weighted mean and its maximum.
func Sweep(intervals [][2]float64) (mean float64, peak int) {
	if len(intervals) == 0 {
		return 0, 0
	}
	type edge struct {
		t float64
		d int
	}
	edges := make([]edge, 0, 2*len(intervals))
	for _, iv := range intervals {
		edges = append(edges, edge{iv[0], +1}, edge{iv[1], -1})
	}
	// Ends before sends at the same instant: back-to-back requests are not concurrent.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].d < edges[j].d
	})
	cur, area := 0, 0.0
	for i, e := range edges {
		if i > 0 {
			area += float64(cur) * (e.t - edges[i-1].t)
		}
		cur += e.d
		peak = max(peak, cur)
	}
	if span := edges[len(edges)-1].t - edges[0].t; span > 0 {
		mean = area / span
	}
	return mean, peak
}

// dist summarises v (which it sorts).
func dist(v []float64) Dist {
	if len(v) == 0 {
		return Dist{}
	}
	sort.Float64s(v)
	return Dist{N: len(v), P50: rank(v, 0.5), P90: rank(v, 0.9), Max: v[len(v)-1]}
}

// rank is the nearest-rank quantile q of sorted v.
func rank(v []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}
