package bench

import (
	"github.com/agentsim/agentsim/internal/agents"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/results"
)

// fill writes the test's counts, latency statistics, tokens, gauges and bench figures into r.
func (p *Point) fill(r *results.Results) {
	r.Requests = p.requests()
	r.Latency = p.latency()
	r.Tokens = p.tokens()
	r.Server.Gauges = p.gauges()
	b := r.Bench
	b.Concurrency, b.OK, b.Failed = p.Concurrency, p.OK(), p.Failed()
	b.OutputTokPerS, b.PerRequestTokPerS = p.Decode().TokPerS, p.PerRequestTokPerS()
}

// requests counts the test's requests by how they ended.
func (p *Point) requests() results.Requests {
	q := results.Requests{Sent: len(p.Calls)}
	for _, c := range p.Calls {
		switch {
		case c.OK():
			q.OK++
		case c.Class.Timeout():
			q.Timeouts++
		case c.Class == agents.ClassCancelled:
			q.Cancelled++
		default:
			q.Errors++
		}
	}
	return q
}

// latency summarises the completed requests' timings, in simulated seconds: TTFT (first token
// of either kind), TTFT of content, ITL (first token to last byte over the frames between),
// TPOT (after the first token, per further output token) and E2E (send to last byte).
func (p *Point) latency() results.Latency {
	var ttft, ttftContent, itl, tpot, e2e []float64
	for _, c := range p.Calls {
		if !c.OK() {
			continue
		}
		e := c.Last.Sub(c.Sent).Seconds()
		e2e = append(e2e, e)
		if c.TTFT > 0 {
			ttft = append(ttft, c.TTFT.Seconds())
		}
		if c.TTFTContent > 0 {
			ttftContent = append(ttftContent, c.TTFTContent.Seconds())
		}
		if d := c.ITL(); d > 0 {
			itl = append(itl, d.Seconds())
		}
		if c.Usage.Completion > 1 && c.TTFT > 0 {
			tpot = append(tpot, (e-c.TTFT.Seconds())/float64(c.Usage.Completion-1))
		}
	}
	return results.Latency{TTFT: results.Summarize(ttft), TTFTContent: results.Summarize(ttftContent),
		ITL: results.Summarize(itl), TPOT: results.Summarize(tpot), E2E: results.Summarize(e2e)}
}

// tokens totals the server-counted tokens; the output rate is over the whole test.
func (p *Point) tokens() results.Tokens {
	var t results.Tokens
	for _, c := range p.Calls {
		t.Prompt += int64(c.Usage.Prompt)
		t.Cached += int64(c.Usage.Cached)
		t.Reasoning += int64(c.Usage.Reasoning)
		t.Content += int64(c.Usage.Completion - c.Usage.Reasoning)
	}
	t.OutputPerSecond = p.WholeTokPerS()
	return t
}

// gauges summarises the server's decode_running and prefill_inflight over the test's samples.
func (p *Point) gauges() results.Gauges {
	g := results.Gauges{Samples: len(p.Samples)}
	g.DecodeRunning = meanMax(p, scrape.DecodeRunning)
	g.PrefillInflight = meanMax(p, scrape.PrefillInflight)
	return g
}

func meanMax(p *Point, name string) results.MeanMax {
	var m results.MeanMax
	sum := 0.0
	for _, s := range p.Samples {
		if v, ok := s.Server[name]; ok {
			sum, m.Max, m.N = sum+v, max(m.Max, v), m.N+1
		}
	}
	if m.N > 0 {
		m.Mean = sum / float64(m.N)
	}
	return m
}
