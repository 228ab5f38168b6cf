package diagnose

import (
	"fmt"
	"math"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// littleTolerance is how far (as a fraction of the expectation) the measured mean latency may
// be from Little's law's expectation and still count as inherent to the load.
const littleTolerance = 0.5

// aloneInFlight is the mean number of requests in flight below which there is no load to
// share: the latency is the server's speed for a single stream.
const aloneInFlight = 1.5

// little is the check that tells slow from stuck: with N requests in flight sharing an
// aggregate output rate T, a request of L output tokens takes about N·L/T.
type little struct {
	inFlight     float64 // mean requests in flight
	tokensPerReq float64 // mean output tokens per successful request
	tokPerS      float64 // aggregate output tokens streamed per second
	expectedS    float64
	measuredS    float64 // mean e2e latency of successful requests
}

// little computes the check at nowS, from r filled at nowS. Its rate is the run's
// tokens.output_per_second, which counts every token streamed — by requests that failed,
// were cancelled or are still open as well as by those that finished — so that a run cut
// short is not credited with a rate near zero.
func (a *Analyzer) little(nowS float64, r *results.Results) (little, bool) {
	out := float64(r.Tokens.Reasoning + r.Tokens.Content)
	if r.Requests.OK == 0 || out == 0 || nowS <= 0 || r.Tokens.OutputPerSecond <= 0 {
		return little{}, false
	}
	l := little{inFlight: a.meanInFlight(nowS), tokensPerReq: out / float64(r.Requests.OK),
		tokPerS: r.Tokens.OutputPerSecond, measuredS: r.Latency.E2E.Mean}
	l.expectedS = l.inFlight * l.tokensPerReq / l.tokPerS
	return l, true
}

// alone reports whether about one request was in flight at a time.
func (l little) alone() bool { return l.inFlight < aloneInFlight }

// inherent reports whether the measured latency is within littleTolerance of the expectation.
func (l little) inherent() bool {
	return math.Abs(l.measuredS-l.expectedS) <= littleTolerance*l.expectedS
}

// why names, for a summary, what the check concluded.
func (l little) why() string {
	switch {
	case l.alone():
		return fmt.Sprintf("the server's own speed for a single stream (%s)", rate(l.tokPerS))
	case l.inherent():
		return "inherent to the load"
	case l.measuredS > l.expectedS:
		return "more than the load explains"
	}
	return "less than the load predicts"
}

// lines states the check and its conclusion, with the direction of any miss.
func (l little) lines() []string {
	check := fmt.Sprintf("Little's law: %.1f requests in flight × %.0f output tokens per request ÷ %s aggregate = %s expected; measured mean latency %s",
		l.inFlight, l.tokensPerReq, rate(l.tokPerS), secs(l.expectedS), secs(l.measuredS))
	ratio := l.measuredS / l.expectedS
	switch {
	case l.alone():
		return []string{check, fmt.Sprintf("with %.1f requests in flight on average there is no load to share: the latency is the server's own speed for a single stream, %s",
			l.inFlight, rate(l.tokPerS))}
	case l.inherent():
		return []string{check, fmt.Sprintf("the latency is inherent to the load (measured within ±%.0f %% of expected): %.1f requests share %s, about %s each",
			100*littleTolerance, l.inFlight, rate(l.tokPerS), rate(l.tokPerS/max(l.inFlight, 1)))}
	case ratio > 1:
		return []string{check, fmt.Sprintf("the latency is not explained by the load (measured %.1f× the expected %s, above it): time goes to something other than sharing the decoder — queueing, prefill, stalls",
			ratio, secs(l.expectedS))}
	}
	return []string{check, fmt.Sprintf("the latency is below what the load predicts (measured %.1f× the expected %s, below it): the requests that finished are the short or early ones — a run cut short, or output lengths that vary widely",
		ratio, secs(l.expectedS))}
}

// slowRule is the slow verdict: requests complete and tokens flow, but the mean end-to-end
// latency is ≥ SlowAfter.
func (a *Analyzer) slowRule(v *view, r *results.Results) (results.Verdict, bool) {
	l, ok := a.little(v.nowS, r)
	if !ok || r.Latency.E2E.Mean < a.slowS {
		return results.Verdict{}, false
	}
	e := r.Latency.E2E
	ev := []string{fmt.Sprintf("%d request%s ok with mean e2e latency %s (p50 %s, p90 %s, max %s) ≥ the slow threshold of %s; TTFT p50 %s",
		r.Requests.OK, plural.S(r.Requests.OK), secs(e.Mean), secs(e.P50), secs(e.P90), secs(e.Max), secs(a.slowS), secs(r.Latency.TTFT.P50))}
	ev = append(ev, l.lines()...)
	ev = append(ev, a.flowLine(v.nowS, r))
	ev = append(ev, a.pastStalls(r)...)
	if len(v.queued) > 0 {
		ev = append(ev, a.queuedLine(v))
	}
	return results.Verdict{
		Kind: results.Slow,
		Summary: fmt.Sprintf("requests complete but slowly: mean latency %s (p50 %s) over %d request%s, %s",
			secs(e.Mean), secs(e.P50), r.Requests.OK, plural.S(r.Requests.OK), l.why()),
		Evidence: a.withGauges(ev, v.nowS),
	}, true
}

// healthy is the verdict when no other applies.
func (a *Analyzer) healthy(v *view, r *results.Results) results.Verdict {
	q := r.Requests
	ev := []string{
		fmt.Sprintf("requests: %d sent, %d ok, %d errors, %d timeouts, %d cancelled, %d in flight",
			q.Sent, q.OK, q.Errors, q.Timeouts, q.Cancelled, q.InFlight),
		fmt.Sprintf("latency: e2e mean %s, p50 %s, p90 %s; TTFT p50 %s", secs(r.Latency.E2E.Mean),
			secs(r.Latency.E2E.P50), secs(r.Latency.E2E.P90), secs(r.Latency.TTFT.P50)),
	}
	if l, ok := a.little(v.nowS, r); ok {
		ev = append(ev, l.lines()[0], a.flowLine(v.nowS, r))
	}
	ev = append(ev, a.pastStalls(r)...)
	if len(v.queued) > 0 {
		ev = append(ev, a.queuedLine(v))
	}
	summary := fmt.Sprintf("%d rounds completed, %d requests ok, p50 latency %s",
		r.Rounds.Completed, q.OK, secs(r.Latency.E2E.P50))
	if r.Rounds.NotStarted > 0 {
		summary += "; " + notStarted(r.Rounds)
	}
	if q.OK == 0 {
		summary = fmt.Sprintf("no request has finished yet after %s: %d in flight, last byte or request end %s ago",
			secs(v.nowS), q.InFlight, secs(v.nowS-a.lastProgressS))
	}
	return results.Verdict{Kind: results.Healthy, Summary: summary, Evidence: a.withGauges(ev, v.nowS)}
}

// flowLine says that tokens flow and how recently.
func (a *Analyzer) flowLine(nowS float64, r *results.Results) string {
	streamed := r.Tokens.OutputPerSecond * nowS
	return fmt.Sprintf("tokens flow: %.0f output tokens streamed at %s aggregate over %s; last byte or request end %s ago",
		streamed, rate(streamed/max(nowS, 1e-9)), secs(nowS), secs(nowS-a.lastProgressS))
}
