package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/internal/plural"
)

// What the server was doing, from what the harness can see: the prompt each request carried,
// when the first token came, which requests finished. A silence is then not bare: silent
// requests that all carry long prompts (few that finished carried as much: under a tenth)
// point at the long contexts, and one long prompt without a first token ahead of shorter ones
// that wait too is head-of-line blocking by its prefill. The prompt rate the server showed — prompt tokens per
// second of time to first token, over the requests that got one — says how long a prefill of
// that size should take.

// prompts accumulates what the requests' prompts tell.
type prompts struct {
	// tokens and ttftS sum the prompts and the times to first token of the requests that got
	// one; n counts them.
	tokens float64
	ttftS  float64
	n      int
	// finished lists the prompts of the requests that finished ok; withTokenMax is the longest
	// of one that got a first token.
	finished     []int
	withTokenMax int
}

// firstToken records a request's first output token, ttftS after its send, on a prompt of ctx
// tokens.
func (p *prompts) firstToken(ctx int, ttftS float64) {
	if ctx <= 0 || ttftS <= 0 {
		return
	}
	p.tokens += float64(ctx)
	p.ttftS += ttftS
	p.n++
	p.withTokenMax = max(p.withTokenMax, ctx)
}

// done records a request that finished ok on a prompt of ctx tokens.
func (p *prompts) done(ctx int) {
	if ctx > 0 {
		p.finished = append(p.finished, ctx)
	}
}

// asLong returns how many finished requests carried a prompt of at least n tokens, and the
// longest of all.
func (p *prompts) asLong(n int) (count, longest int) {
	for _, c := range p.finished {
		if c >= n {
			count++
		}
		longest = max(longest, c)
	}
	return count, longest
}

// rate is the prompt tokens per second of time to first token, 0 when unknown.
func (p *prompts) rate() float64 {
	if p.n == 0 || p.ttftS <= 0 {
		return 0
	}
	return p.tokens / p.ttftS
}

// doingLine says what the server was doing while the requests rs were silent at nowS, as
// the prompts tell it: "" when they tell nothing.
func (a *Analyzer) doingLine(rs []*request, nowS float64) string {
	if len(rs) == 0 {
		return ""
	}
	p := &a.doing
	least, most := rs[0].ctxTokens, rs[0].ctxTokens
	var first *request // the earliest sent
	begun := 0
	for _, r := range rs {
		if r.ctxTokens <= 0 {
			return "" // prompts unknown (a recording without them)
		}
		least, most = min(least, r.ctxTokens), max(most, r.ctxTokens)
		if first == nil || r.sentS < first.sentS {
			first = r
		}
		if r.output {
			begun++
		}
	}
	longAsMany, longestDone := p.asLong(least)
	rate := ""
	if r := p.rate(); r > 0 {
		rate = fmt.Sprintf("; at the prompt rate the server showed, %.0f tokens/s of time to first token over %s, a %s prompt takes %s to prefill",
			r, plural.Of(p.n, "request"), ktokAdj(most), secs(float64(most)/r))
	}
	switch {
	case len(p.finished) > 0 && 10*longAsMany < len(p.finished):
		state := "before its first token"
		switch {
		case begun == len(rs):
			state = "mid-answer: each had begun its output"
		case begun > 0:
			state = fmt.Sprintf("%d mid-answer, %d before the first token", begun, len(rs)-begun)
		}
		return fmt.Sprintf("what the server was doing: the %s carry long prompts, %s, where %d of the %d requests that finished carried as much (%s at most): the server stops on long contexts, %s%s, and the longest silence is %s",
			plural.Of(len(rs), "silent request"), spanTok(least, most), longAsMany, len(p.finished), ktok(longestDone), state, rate, secs(longestSilence(rs, nowS)))
	case !first.output && len(rs) > 1 && first.ctxTokens == most && headOfLine(rs, first):
		return fmt.Sprintf("what the server was doing: head-of-line blocking by a %s prefill: request %s (sent at t=%s) has had no first token for %s, and the %s sent after it wait too, though their prompts are shorter (%s)%s",
			ktokAdj(first.ctxTokens), first.id, secs(first.sentS), secs(first.silenceS(nowS)), plural.Of(len(rs)-1, "silent request"), spanTok(least, secondLongest(rs, first)), rate)
	}
	return ""
}

// headOfLine reports whether every silent request other than first was sent after it, has no
// output, and carries a shorter prompt.
func headOfLine(rs []*request, first *request) bool {
	for _, r := range rs {
		if r != first && (r.output || r.sentS < first.sentS || r.ctxTokens >= first.ctxTokens) {
			return false
		}
	}
	return true
}

// secondLongest is the longest prompt among rs other than first.
func secondLongest(rs []*request, first *request) int {
	most := 0
	for _, r := range rs {
		if r != first {
			most = max(most, r.ctxTokens)
		}
	}
	return most
}

// longestSilence is the longest silence among rs at nowS.
func longestSilence(rs []*request, nowS float64) float64 {
	return slices.MaxFunc(rs, func(x, y *request) int {
		switch {
		case x.silenceS(nowS) < y.silenceS(nowS):
			return -1
		case x.silenceS(nowS) > y.silenceS(nowS):
			return 1
		}
		return 0
	}).silenceS(nowS)
}

// ktok writes a token count in thousands: "90 k tokens", under 1,000 as it is.
func ktok(n int) string {
	if n < 1000 {
		return plural.Of(n, "token")
	}
	return fmt.Sprintf("%s k tokens", strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0"))
}

// ktokAdj writes a token count as an adjective: "a 90 k-token prefill".
func ktokAdj(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d-token", n)
	}
	return strings.TrimSuffix(ktok(n), " tokens") + "-token"
}

// spanTok writes a range of token counts: "33–41 k tokens", one count when they are equal.
func spanTok(least, most int) string {
	if least == most || least < 1000 {
		if least == most {
			return ktok(most)
		}
		return fmt.Sprintf("%d–%s", least, ktok(most))
	}
	return fmt.Sprintf("%s–%s", strings.TrimSuffix(ktok(least), " k tokens"), ktok(most))
}
