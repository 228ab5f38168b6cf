package diagnose

import (
	"fmt"
	"math"

	"github.com/agentsim/agentsim/results"
)

// littleTolerance is how far (as a fraction of the expectation) the measured mean latency may
// be from Little's law's expectation and still count as inherent to the load.
const littleTolerance = 0.5

// little is the check that tells slow from stuck: with N requests in flight sharing an
// aggregate output rate T, a request of L output tokens takes about N·L/T.
type little struct {
	inFlight     float64 // mean requests in flight
	tokensPerReq float64 // mean output tokens per successful request
	tokPerS      float64 // aggregate output tokens per second
	expectedS    float64
	measuredS    float64 // mean e2e latency of successful requests
}

func (a *Analyzer) little(nowS float64, r *results.Results) (little, bool) {
	out := float64(r.Tokens.Reasoning + r.Tokens.Content)
	if r.Requests.OK == 0 || out == 0 || r.Tokens.OutputPerSecond <= 0 {
		return little{}, false
	}
	l := little{inFlight: a.meanInFlight(nowS), tokensPerReq: out / float64(r.Requests.OK),
		tokPerS: r.Tokens.OutputPerSecond, measuredS: r.Latency.E2E.Mean}
	l.expectedS = l.inFlight * l.tokensPerReq / l.tokPerS
	return l, true
}

// inherent reports whether the measured latency is within littleTolerance of the expectation.
func (l little) inherent() bool {
	return math.Abs(l.measuredS-l.expectedS) <= littleTolerance*l.expectedS
}

// lines states the check and its conclusion.
func (l little) lines() []string {
	check := fmt.Sprintf("Little's law: %.1f requests in flight × %.0f output tokens per request ÷ %s aggregate = %s expected; measured mean latency %s",
		l.inFlight, l.tokensPerReq, rate(l.tokPerS), secs(l.expectedS), secs(l.measuredS))
	if l.inherent() {
		return []string{check, fmt.Sprintf("the latency is inherent to the load (measured within ±%.0f %% of expected): %.1f requests share %s, about %s each",
			100*littleTolerance, l.inFlight, rate(l.tokPerS), rate(l.tokPerS/max(l.inFlight, 1)))}
	}
	return []string{check, fmt.Sprintf("the latency is not explained by the load (measured %.1f× the expected %s): time goes to something other than sharing the decoder — queueing, prefill, stalls",
		l.measuredS/l.expectedS, secs(l.expectedS))}
}

// slowRule is the slow verdict: requests complete and tokens flow, but the mean end-to-end
// latency is ≥ SlowAfter.
func (a *Analyzer) slowRule(v *view, r *results.Results) (results.Verdict, bool) {
	l, ok := a.little(v.nowS, r)
	if !ok || r.Latency.E2E.Mean < a.slowS {
		return results.Verdict{}, false
	}
	e := r.Latency.E2E
	why := "inherent to the load"
	if !l.inherent() {
		why = "more than the load explains"
	}
	ev := []string{fmt.Sprintf("%d request%s ok with mean e2e latency %s (p50 %s, p90 %s, max %s) ≥ the slow threshold of %s; TTFT p50 %s",
		r.Requests.OK, plural(r.Requests.OK), secs(e.Mean), secs(e.P50), secs(e.P90), secs(e.Max), secs(a.slowS), secs(r.Latency.TTFT.P50))}
	ev = append(ev, l.lines()...)
	ev = append(ev, a.flowLine(v.nowS, r))
	ev = append(ev, a.pastStalls(r)...)
	return results.Verdict{
		Kind:     results.Slow,
		Summary:  fmt.Sprintf("requests complete but slowly: mean latency %s (p50 %s) over %d requests, %s", secs(e.Mean), secs(e.P50), r.Requests.OK, why),
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
	summary := fmt.Sprintf("%d rounds completed, %d requests ok, p50 latency %s",
		r.Rounds.Completed, q.OK, secs(r.Latency.E2E.P50))
	if q.OK == 0 {
		summary = fmt.Sprintf("no request has finished yet after %s: %d in flight, last byte or request end %s ago",
			secs(v.nowS), q.InFlight, secs(v.nowS-a.lastProgressS))
	}
	return results.Verdict{Kind: results.Healthy, Summary: summary, Evidence: a.withGauges(ev, v.nowS)}
}

// flowLine says that tokens flow and how recently.
func (a *Analyzer) flowLine(nowS float64, r *results.Results) string {
	return fmt.Sprintf("tokens flow: %d output tokens at %s aggregate over %s; last byte or request end %s ago",
		r.Tokens.Reasoning+r.Tokens.Content, rate(r.Tokens.OutputPerSecond), secs(nowS), secs(nowS-a.lastProgressS))
}
