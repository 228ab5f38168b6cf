package bench

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
)

// OutputTokens is the output length request i returned, in tokens: the server's
// usage.completion_tokens, or without usage the number of data frames from its first token on
// (one token each, as the rates count them).
func (p *Point) OutputTokens(i int) int {
	c := p.Calls[i]
	if c.Usage.Completion > 0 {
		return c.Usage.Completion
	}
	first := c.FirstToken()
	if first.IsZero() {
		return 0
	}
	return int(newProgress(p.chunks[i], first, c).total)
}

// Short counts the completed requests that returned fewer than maxTokens output tokens — a
// server that ignores max_tokens or ignore_eos — and the fewest any of them returned (0 when
// none was short). Such a test did not measure the output asked for.
func (p *Point) Short(maxTokens int) (n, fewest int) {
	for i, c := range p.Calls {
		if !c.OK() {
			continue
		}
		if got := p.OutputTokens(i); got < maxTokens {
			if n == 0 || got < fewest {
				fewest = got
			}
			n++
		}
	}
	return n, fewest
}

// shortLine says how many completed requests came back short, and why, or "" when none did.
// A request that ended with finish_reason "length" below max_tokens was stopped by the
// server's context window (llama.cpp stops a slot at its edge), not by ignoring max_tokens.
func (p *Point) shortLine(maxTokens int) string {
	n, fewest := p.Short(maxTokens)
	if n == 0 {
		return ""
	}
	edge, atEdge := 0, 0
	for i, c := range p.Calls {
		if c.OK() && p.OutputTokens(i) < maxTokens && c.FinishReason == events.FinishLength && c.Usage.Prompt > 0 {
			atEdge++
			edge = max(edge, c.Usage.Prompt+c.Usage.Completion)
		}
	}
	head := fmt.Sprintf("%d/%d completed with fewer than the %d output tokens asked (fewest %d)", n, p.OK(), maxTokens, fewest)
	if atEdge == n {
		return fmt.Sprintf("%s: the server stopped them at its context window (finish_reason length with prompt + output up to %d tokens), so the rates are not those of %d-token outputs: ask for fewer --max-tokens or a shorter prompt",
			head, edge, maxTokens)
	}
	return fmt.Sprintf("%s: the server ignored max_tokens or ignore_eos, and the rates are not those of %d-token outputs", head, maxTokens)
}
