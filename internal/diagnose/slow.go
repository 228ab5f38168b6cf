package diagnose

import (
	"fmt"
	"math"
	"slices"

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
	// measuredS is the mean e2e latency of the successful requests and of those cut before
	// their end (censored, at their time so far): a lower bound of the mean when cut > 0.
	// finishedS is the mean of the successful ones alone, ok their number.
	measuredS, finishedS float64
	ok, cut              int
}

// censored returns the time so far, in seconds, of each request cut before its end at nowS:
// cancelled by the run's stop, or still open. Each is a lower bound of its latency; leaving
// them out keeps only the requests short enough to finish, and a run whose long requests
// were all cut would look fast.
func (a *Analyzer) censored(nowS float64) []float64 {
	out := slices.Clone(a.cut)
	for _, r := range a.open {
		if r.sentS <= nowS {
			out = append(out, nowS-r.sentS)
		}
	}
	return out
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
	ok := r.Requests.OK
	l := little{inFlight: a.meanInFlight(nowS), tokensPerReq: out / float64(ok),
		tokPerS: r.Tokens.OutputPerSecond, measuredS: r.Latency.E2E.Mean, finishedS: r.Latency.E2E.Mean, ok: ok}
	if cut := a.censored(nowS); len(cut) > 0 {
		// Every request that streamed counts, at its time so far and with the tokens it got:
		// the in-flight count is of all of them, so the tokens and the time must be too.
		n := float64(ok + len(cut))
		l.cut = len(cut)
		l.measuredS = (l.finishedS*float64(ok) + sumOf(cut)) / n
		l.tokensPerReq = max(out, l.tokPerS*nowS) / n
	}
	l.expectedS = l.inFlight * l.tokensPerReq / l.tokPerS
	return l, true
}

// sumOf adds up xs.
func sumOf(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// measured names the measured mean latency, and what it counts when requests were cut.
func (l little) measured() string {
	if l.cut == 0 {
		return "measured mean latency " + secs(l.measuredS)
	}
	return fmt.Sprintf("measured mean latency ≥ %s over %d ok and %d cut before their end (censored: counted at their time so far)",
		secs(l.measuredS), l.ok, l.cut)
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
	check := fmt.Sprintf("Little's law: %.1f requests in flight × %.0f output tokens per request ÷ %s aggregate = %s expected; %s",
		l.inFlight, l.tokensPerReq, rate(l.tokPerS), secs(l.expectedS), l.measured())
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
// latency is ≥ SlowAfter — counting the requests cut before their end at their time so far
// (censored) — or most of the cut requests had already run SlowAfter.
func (a *Analyzer) slowRule(v *view, r *results.Results) (results.Verdict, bool) {
	l, ok := a.little(v.nowS, r)
	if !ok {
		return results.Verdict{}, false
	}
	cut := a.censored(v.nowS)
	long := 0 // cut requests that had already run SlowAfter
	for _, c := range cut {
		if c >= a.slowS {
			long++
		}
	}
	cutSlow := 2*long > len(cut)
	if max(r.Latency.E2E.Mean, l.measuredS) < a.slowS && !cutSlow {
		return results.Verdict{}, false
	}
	e := r.Latency.E2E
	threshold := ""
	if e.Mean >= a.slowS {
		threshold = " ≥ the slow threshold of " + secs(a.slowS)
	}
	ev := []string{fmt.Sprintf("%d request%s ok with mean e2e latency %s (p50 %s, p90 %s, max %s)%s; TTFT p50 %s",
		r.Requests.OK, plural.S(r.Requests.OK), secs(e.Mean), secs(e.P50), secs(e.P90), secs(e.Max), threshold, secs(r.Latency.TTFT.P50))}
	summary := fmt.Sprintf("requests complete but slowly: mean latency %s (p50 %s) over %d request%s, %s",
		secs(e.Mean), secs(e.P50), r.Requests.OK, plural.S(r.Requests.OK), l.why())
	if len(cut) > 0 && (l.measuredS > e.Mean || cutSlow) {
		ev = append(ev, fmt.Sprintf("%d request%s cut before their end (by the run's stop, or still open) had run %s on average (longest %s), %d of them ≥ the slow threshold of %s: counted at their time so far (censored), the mean latency is ≥ %s",
			len(cut), plural.S(len(cut)), secs(sumOf(cut)/float64(len(cut))), secs(slices.Max(cut)), long, secs(a.slowS), secs(l.measuredS)))
		switch {
		case e.Mean >= a.slowS:
		case cutSlow:
			summary = fmt.Sprintf("requests complete but slowly: %d of the %d requests cut before their end had run ≥ %s (longest %s; censored, counted at their time so far), while the %d that finished took %s on average (p50 %s); mean latency ≥ %s counting them all, %s",
				long, len(cut), secs(a.slowS), secs(slices.Max(cut)), r.Requests.OK, secs(e.Mean), secs(e.P50), secs(l.measuredS), l.why())
		default:
			summary = fmt.Sprintf("requests complete but slowly: mean latency ≥ %s counting the %d request%s cut before their end at their time so far (censored); the %d that finished took %s on average (p50 %s), %s",
				secs(l.measuredS), len(cut), plural.S(len(cut)), r.Requests.OK, secs(e.Mean), secs(e.P50), l.why())
		}
	}
	ev = append(ev, l.lines()...)
	ev = append(ev, a.flowLine(v.nowS, r))
	ev = append(ev, a.pastStalls(r)...)
	if len(v.queued) > 0 {
		ev = append(ev, a.queuedLine(v))
	}
	return results.Verdict{Kind: results.Slow, Summary: summary, Evidence: a.withGauges(ev, v.nowS)}, true
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
	summary := fmt.Sprintf("%s completed, %s ok, p50 latency %s",
		plural.Of(r.Rounds.Completed, "round"), plural.Of(q.OK, "request"), secs(r.Latency.E2E.P50))
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
