package calibrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentsim/agentsim/internal/plural"
)

// Designed lengths, in tokens.
const (
	shortPrompt  = 32
	sweepOutput  = 64
	batchOutput  = 48
	ttftOutput   = 2
	prefixPrompt = 2048
	// turnTokens is a next turn's new user message, agentsim's estimate: an agent's tool
	// result or a user's reply.
	turnTokens = 256
	// turnReply is the reply a next turn follows, in tokens: the first request decodes it
	// and the turn carries a reply of that length, as an agent's next request carries the
	// one it got. llama-server re-tokenizes the reply's text, so the turn computes it again,
	// and a turn's prompt after a decoded reply took a median 42 ms where the same turns after
	// a 2-token reply took 29 ms (docs/calibrate.md §2).
	turnReply = sweepOutput
	// besidePrompt is the first message of the turn-beside probe's conversation and of each
	// of its streams.
	besidePrompt = 1024
	// turnIdleOutput is what each stream of the turn-after probe asks: they end before the
	// conversation's reply does.
	turnIdleOutput = 16
)

// plan designs the experiments within the options' limits.
func (r *runner) plan() map[string][]Point {
	o, rep := r.o, r.o.Repeats
	// The largest batch shows as the requests that start before the first one ends: its
	// outputs are long beside the time a request takes to start.
	long := r.outputFor(4 * r.ttft)
	plan := map[string][]Point{
		ExpBatch:  {{Exp: ExpBatch, Batch: o.MaxConcurrency, Prompt: shortPrompt, Output: long, Repeats: 1}},
		ExpPrefix: {{Exp: ExpPrefix, Batch: 2, Prompt: min(prefixPrompt, o.MaxPrompt), Output: ttftOutput, Repeats: rep}},
		// Its first four fills (1, 2, 4, 8 prompts) for the plan; it goes on while it must.
		ExpPrefixSize:   {{Exp: ExpPrefixSize, Batch: 15, Prompt: min(prefixPrompt, o.MaxPrompt), Output: ttftOutput, Repeats: 1}},
		ExpInterference: {{Exp: ExpInterference, Batch: 2, Prompt: min(3*o.ChunkTokens, o.MaxPrompt), Output: ttftOutput, Repeats: rep}},
		ExpKV:           {{Exp: ExpKV, Batch: o.MaxConcurrency, Prompt: o.MaxPrompt / 2, Output: sweepOutput, Repeats: 1}},
	}
	for b := 1; b <= o.MaxConcurrency; b *= 2 {
		plan[ExpConcurrency] = append(plan[ExpConcurrency], Point{Exp: ExpConcurrency, Batch: b, Prompt: shortPrompt, Output: sweepOutput, Repeats: rep})
	}
	for _, b := range dedupe(1, min(4, o.MaxConcurrency), min(8, o.MaxConcurrency)) {
		for _, p := range dedupe(o.MaxPrompt/16, o.MaxPrompt/4, o.MaxPrompt/2, o.MaxPrompt) {
			// Decoding together needs outputs that outlast the batch's prefills.
			out := r.outputFor(2 * (r.ttft + time.Duration(b*p)*r.perTok))
			plan[ExpContext] = append(plan[ExpContext], Point{Exp: ExpContext, Batch: b, Prompt: max(p, shortPrompt), Output: out, Repeats: rep})
		}
	}
	for _, p := range []int{64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536} {
		if p <= o.MaxPrompt {
			plan[ExpPrompt] = append(plan[ExpPrompt], Point{Exp: ExpPrompt, Batch: 1, Prompt: p, Output: ttftOutput, Repeats: rep})
		}
	}
	for _, p := range []int{1024, 2048, 4096, 8192} {
		if p <= o.MaxPrompt/2 {
			// Output is the first request's, the reply the turn follows.
			plan[ExpTurn] = append(plan[ExpTurn], Point{Exp: ExpTurn, Batch: 1, Prompt: p, Output: turnReply, Repeats: rep})
		}
	}
	// Turns beside one stream up to as many as the server runs with the conversation: the
	// pool's price is the slope of a line through them (poolFromTurns), and a line through
	// two batch sizes only is as noisy as their difference. The turns after streams that
	// ended, a few and as many as the server runs, decide the idle slots' KV (idleSlots).
	for _, b := range dedupe(min(1, o.MaxConcurrency-1), min(3, o.MaxConcurrency-1), min(5, o.MaxConcurrency-1), min(7, o.MaxConcurrency-1)) {
		if b >= 1 {
			plan[ExpTurnBeside] = append(plan[ExpTurnBeside], Point{Exp: ExpTurnBeside, Batch: b, Prompt: min(besidePrompt, o.MaxPrompt/4), Output: turnReply, Repeats: rep})
		}
	}
	for _, b := range dedupe(min(3, o.MaxConcurrency-1), min(7, o.MaxConcurrency-1)) {
		if b >= 1 {
			plan[ExpTurnIdle] = append(plan[ExpTurnIdle], Point{Exp: ExpTurnIdle, Batch: b, Prompt: min(besidePrompt, o.MaxPrompt/4), Output: turnReply, Repeats: rep})
		}
	}
	return plan
}

// outputFor is the output, in tokens, that decodes for about d at the warm-up's step, within
// batchOutput and 4 096.
func (r *runner) outputFor(d time.Duration) int {
	return int(min(max(d/r.step, batchOutput), 4096))
}

// dedupe returns the distinct values, in order.
func dedupe(v ...int) []int {
	var out []int
	for _, x := range v {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// prefix runs the repeated-prefix probe: a fresh long first message with a question, then the
// same first message with another question. A prefix cache answers the second's first message.
func (r *runner) prefix(ctx context.Context, ps []Point) {
	r.pairs(ctx, ps, "repeated prefix", func(p Point) [2]Request {
		text, est := prompt(r.o.Seed, r.next, p.Prompt)
		r.next++
		var reqs [2]Request
		for i, q := range []string{"and the first question", "and the second question"} {
			reqs[i] = Request{Messages: []string{text, "ok", q}, Estimate: est + 2*messageFraming + 1 + 4, MaxTokens: p.Output}
		}
		return reqs
	})
}

// turns runs the next-turn probe: a fresh first message whose reply decodes turnReply tokens,
// then the same conversation with a reply of that length and a new user message of turnTokens,
// as an agent's next request. A prefix cache answers the first message, so the turn computes
// the new tokens over a cached context: what an agent's requests mostly are, and, where the
// server reports its own prompt time, what the prefill fit needs to price the attention over a
// cached context (fitprefill.go, prefill).
func (r *runner) turns(ctx context.Context, ps []Point) {
	r.pairs(ctx, ps, "next turn", func(p Point) [2]Request {
		text, est := prompt(r.o.Seed, r.next, p.Prompt)
		reply, replyEst := prompt(r.o.Seed, r.next+1, p.Output)
		turn, turnEst := prompt(r.o.Seed, r.next+2, turnTokens)
		r.next += 3
		return [2]Request{
			{Messages: []string{text}, Estimate: est, MaxTokens: p.Output},
			{Messages: []string{text, reply, turn}, Estimate: est + replyEst + turnEst - 2*promptPriming, MaxTokens: ttftOutput},
		}
	})
}

// turnsBeside runs the turn-beside probe (ExpTurnBeside) or the turn-after probe (ExpTurnIdle).
// Beside: Batch streams of fresh prompts and the first message of a conversation, sent at
// once, so that the conversation's reply decodes beside the streams as an agent's does beside
// the others'; once it has, the conversation's next turn (the reply and turnTokens of new
// text, as the next-turn probe's), sent while the streams still decode.
// The turn's prompt is computed over its cached context in a step beside the streams, which
// hold their KV in the same pool: on a unified KV (llama-server) its attention reads theirs
// too (prefillPool). The streams are cancelled once the turn's first token has come. A run
// is {first, turn, streams...}; it is kept when the first and the turn completed and every
// stream was still decoding when the turn's first token came. After: the same, but the
// streams ask turnIdleOutput tokens, and the turn is sent once they and the first have ended:
// whether what they held is still in the pool, read by the turn's attention, shows in the
// turn's prompt time (kv_idle_slots, fitpool.go); a run is kept when every request completed.
func (r *runner) turnsBeside(ctx context.Context, ps []Point) {
	for _, p := range ps {
		if r.running > 0 && p.Batch+1 > r.running {
			p.Batch = r.running - 1
		}
		if p.Batch < 1 {
			r.d.skip(p.Exp, fmt.Sprintf("%s: the server runs one request at a time, so no stream decodes beside the conversation", p))
			continue
		}
		if slices.ContainsFunc(r.d.Of(p.Exp), func(m *Measured) bool { return m.Point.Batch == p.Batch }) || r.over(p) {
			continue
		}
		idle := p.Exp == ExpTurnIdle
		m := Measured{Point: p}
		at := r.o.Client.Clock.Now()
		// The streams outlast the conversation's prefill beside theirs (at most a step-long
		// token each meanwhile), its reply (decoded in their batch, a token of theirs a token
		// of its) and its turn, twice over: a server that does not stop a request whose client
		// went runs them to their end, and the next point's flush waits for their slots.
		prefill := r.ttft + time.Duration((p.Batch+1)*p.Prompt)*r.perTok
		out := min(max(2*(int(prefill/r.step)+p.Output+16), batchOutput), 4096)
		if idle {
			out = turnIdleOutput
		}
		var dropped int
		var why string
		for range p.Repeats {
			run := r.besideRun(ctx, p, out, idle)
			if reason := besideKept(run, idle); reason != "" {
				dropped, why = dropped+1, reason
				continue
			}
			m.Runs = append(m.Runs, run)
		}
		r.points++
		took := r.o.Client.Clock.Since(at)
		r.done += took
		if dropped > 0 {
			r.d.skip(p.Exp, fmt.Sprintf("%s: %d of %d repeats left out: %s", p, dropped, p.Repeats, why))
		}
		if len(m.Runs) == 0 {
			r.printf("[%d/%d] %s: skipped: %s\n", r.points, r.total, p, why)
			continue
		}
		turns := make([]Obs, len(m.Runs))
		for i, run := range m.Runs {
			turns[i] = run[1]
		}
		where := "beside"
		if idle {
			where = "after"
		}
		r.printf("[%d/%d] %s: turn's TTFT %s %s %s of %d tokens (%s; %s of about %s)\n", r.points, r.total, p,
			median(turns, (*Obs).TTFT).Round(time.Microsecond), where, plural.Of(p.Batch, "stream"), out, took.Round(time.Millisecond),
			r.o.Client.Clock.Since(r.start).Round(time.Second), r.planned.Round(time.Second))
		r.d.Points = append(r.d.Points, m)
	}
}

// besideRun runs one repeat of a turn-beside point, or with idle of a turn-after one:
// {first, turn, streams...}.
func (r *runner) besideRun(ctx context.Context, p Point, out int, idle bool) []Obs {
	// What the streams hold is then all the pool holds beside the conversation.
	r.flush(ctx)
	run := make([]Obs, 2+p.Batch)
	streams, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range p.Batch {
		text, est := prompt(r.o.Seed, r.next, p.Prompt)
		r.next++
		wg.Go(func() {
			run[2+i] = r.o.Client.Send(streams, Request{Messages: []string{text}, Estimate: est, MaxTokens: out})
		})
	}
	text, est := prompt(r.o.Seed, r.next, p.Prompt)
	reply, replyEst := prompt(r.o.Seed, r.next+1, p.Output)
	turn, turnEst := prompt(r.o.Seed, r.next+2, turnTokens)
	r.next += 3
	run[0] = r.o.Client.Send(ctx, Request{Messages: []string{text}, Estimate: est, MaxTokens: p.Output})
	if idle {
		wg.Wait()
	}
	if run[0].OK() {
		run[1] = r.o.Client.Send(ctx, Request{Messages: []string{text, reply, turn}, Estimate: est + replyEst + turnEst - 2*promptPriming, MaxTokens: ttftOutput})
	} else {
		run[1] = Obs{Err: "not sent: the first message failed"}
	}
	cancel()
	wg.Wait()
	return run
}

// besideKept says why a turn-beside run (or with idle a turn-after one) cannot be used, ""
// when it can.
func besideKept(run []Obs, idle bool) string {
	for _, o := range run[:2] {
		if !o.OK() {
			return o.Err
		}
	}
	if idle {
		for _, s := range run[2:] {
			if !s.OK() {
				return "a stream failed: " + s.Err
			}
		}
		return ""
	}
	// A stream still decoding when the turn was sent, and cut by the cancel rather than ended,
	// decoded through the turn's step (its token from that step can arrive just before the
	// turn's first one).
	sent := run[1].Start
	for _, s := range run[2:] {
		switch {
		case len(s.Chunks) == 0 || strings.HasPrefix(s.Err, "in stream: "):
			return "a stream failed: " + s.Err
		case s.Err == "" || s.Chunks[len(s.Chunks)-1].Before(sent):
			return "a stream had ended before the turn was computed"
		}
	}
	return ""
}

// pairs runs a probe of two requests sent one after the other, each repeat a fresh pair from
// pair, and records each point with its repeats whose requests all completed; second names the
// second request in the progress line.
func (r *runner) pairs(ctx context.Context, ps []Point, second string, pair func(Point) [2]Request) {
	for _, p := range ps {
		if r.over(p) {
			return
		}
		m := Measured{Point: p}
		at := r.o.Client.Clock.Now()
		for range p.Repeats {
			r.flush(ctx)
			reqs := pair(p)
			m.Runs = append(m.Runs, []Obs{r.o.Client.Send(ctx, reqs[0]), r.o.Client.Send(ctx, reqs[1])})
		}
		r.points++
		if !r.keepWhole(&m) {
			return
		}
		fresh, again := prefixTTFTs(&m)
		r.printf("[%d/%d] %s: TTFT fresh %s, %s %s (%s; %s of about %s)\n", r.points, r.total, p,
			fresh.Round(time.Microsecond), second, again.Round(time.Microsecond), r.o.Client.Clock.Since(at).Round(time.Millisecond),
			r.o.Client.Clock.Since(r.start).Round(time.Second), r.planned.Round(time.Second))
		r.d.Points = append(r.d.Points, m)
	}
}

// keepWhole keeps a probe's repeats whose requests all completed; none is a skip, with the
// first error.
func (r *runner) keepWhole(m *Measured) bool {
	err := firstError(m.Runs)
	m.Runs = slices.DeleteFunc(m.Runs, func(run []Obs) bool {
		return slices.ContainsFunc(run, func(o Obs) bool { return !o.OK() })
	})
	switch {
	case len(m.Runs) == 0:
		r.d.skip(m.Point.Exp, fmt.Sprintf("%s: %s", m.Point, err))
		r.printf("[%d/%d] %s: skipped: %s\n", r.points, r.total, m.Point, err)
		return false
	case err != "":
		r.d.skip(m.Point.Exp, fmt.Sprintf("%s: a repeat failed, the others kept: %s", m.Point, err))
	}
	return true
}

// prefixTTFTs are the probe's median TTFTs, of the fresh prompts and of the repeated ones.
func prefixTTFTs(m *Measured) (fresh, again time.Duration) {
	var a, b []Obs
	for _, run := range m.Runs {
		a, b = append(a, run[0]), append(b, run[1])
	}
	return median(a, (*Obs).TTFT), median(b, (*Obs).TTFT)
}

// interference runs the interference probe: two streams decoding, and, once they are, one
// long prompt. How the streams' tokens pause while it is prefilled says which engine the
// server is (see kindOf).
func (r *runner) interference(ctx context.Context, ps []Point) {
	for _, p := range ps {
		if r.over(p) {
			return
		}
		if r.refused && r.longestOK > 0 {
			// A server that refused longer prompts gets the longest it took.
			p.Prompt = min(p.Prompt, r.longestOK)
		}
		prefill := r.ttft + time.Duration(p.Prompt)*r.perTok
		out := int(min(max((2*prefill+40*r.step)/r.step, 64), 4000))
		delay := 2*r.ttft + 16*r.step
		m := Measured{Point: p}
		at := r.o.Client.Clock.Now()
		for range p.Repeats {
			run := make([]Obs, p.Batch+1)
			var wg sync.WaitGroup
			for i := range p.Batch {
				text, est := prompt(r.o.Seed, r.next, shortPrompt)
				r.next++
				wg.Go(func() {
					run[i] = r.o.Client.Send(ctx, Request{Messages: []string{text}, Estimate: est, MaxTokens: out})
				})
			}
			text, est := prompt(r.o.Seed, r.next, p.Prompt)
			r.next++
			if r.o.Client.Clock.Sleep(ctx, delay) == nil {
				run[p.Batch] = r.o.Client.Send(ctx, Request{Messages: []string{text}, Estimate: est, MaxTokens: p.Output})
			}
			wg.Wait()
			m.Runs = append(m.Runs, run)
		}
		r.points++
		if !r.keepWhole(&m) {
			return
		}
		r.printf("[%d/%d] %s: streams of %d tokens (%s; %s of about %s)\n", r.points, r.total, p, out,
			r.o.Client.Clock.Since(at).Round(time.Millisecond), r.o.Client.Clock.Since(r.start).Round(time.Second), r.planned.Round(time.Second))
		r.d.Points = append(r.d.Points, m)
	}
}

// batchFound is the largest batch a largest-batch point shows: how many requests had their
// first token before the first one finished; all says every request did (the server may run
// more).
type batchFound struct {
	n   int
	all bool
}

// maxRunning reads the largest batch from one run of the largest-batch point.
func maxRunning(run []Obs) batchFound {
	var ok []Obs
	var first time.Time
	for _, o := range run {
		if !o.OK() {
			continue
		}
		ok = append(ok, o)
		if last := o.Chunks[len(o.Chunks)-1]; first.IsZero() || last.Before(first) {
			first = last
		}
	}
	n := 0
	for _, o := range ok {
		if o.Chunks[0].Before(first) {
			n++
		}
	}
	return batchFound{n: max(n, 1), all: n == len(ok)}
}
