package bench

import "fmt"

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

// shortLine says how many completed requests came back short, or "" when none did.
func (p *Point) shortLine(maxTokens int) string {
	n, fewest := p.Short(maxTokens)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d completed with fewer than the %d output tokens asked (fewest %d): the server ignored max_tokens or ignore_eos, and the rates are not those of %d-token outputs",
		n, p.OK(), maxTokens, fewest, maxTokens)
}
