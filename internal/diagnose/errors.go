package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"

	"github.com/agentsim/agentsim/results"
)

// errorFraction is the share of finished requests that finally fail (their last attempt an
// error or a timeout; end-of-run cancellations do not count) from which the run's verdict is
// errors.
const errorFraction = 0.05

// errorsRule is the errors verdict. It counts outcomes, not attempts: a request that failed
// and then succeeded on retry is a success with a retry, evidence on every verdict. Tried in
// its turn (v set), no rule before it found a stall, and its evidence says the long silences
// were none; leading another verdict (v nil, errorsLead), that verdict says what they were.
func (a *Analyzer) errorsRule(v *view, r *results.Results) (results.Verdict, bool) {
	q := r.Requests
	failed := q.Failed
	finished := q.OK + failed
	if failed == 0 || float64(failed) < errorFraction*float64(finished) {
		return results.Verdict{}, false
	}
	ev := []string{
		fmt.Sprintf("%d of %d requests failed: %s", failed, finished, a.failureBreakdown()),
		fmt.Sprintf("%d errors, %d timeouts, %d retries, %d cancelled; rounds: %d completed, %d failed",
			q.Errors, q.Timeouts, q.Retries, q.Cancelled, r.Rounds.Completed, r.Rounds.Failed),
	}
	ev = append(ev, serverWords(r)...)
	if q.OK > 0 {
		ev = append(ev, fmt.Sprintf("the %d requests that succeeded took %s on average (p50 %s)",
			q.OK, secs(r.Latency.E2E.Mean), secs(r.Latency.E2E.P50)))
	}
	if v != nil {
		ev = append(ev, a.pastStalls(r)...)
	}
	return results.Verdict{
		Kind:     results.Errors,
		Summary:  fmt.Sprintf("%d of %d finished requests failed (%s)%s", failed, finished, pct(float64(failed)/float64(finished)), leadWords(r)),
		Evidence: ev,
	}, true
}

// failureBreakdown lists the requests that finally failed by class and status, most
// frequent first: "23 http_status 429, 18 error_frame".
func (a *Analyzer) failureBreakdown() string { return reasonList(a.failures) }

// leadWords is what the server said to the most frequent class of failure it answered, for a
// summary: `: http_status 400 "Context size has been exceeded"`; "" when it said nothing.
func leadWords(r *results.Results) string {
	for _, f := range r.Failures {
		if f.FirstMessage != "" && (f.Status != 0 || f.Class == events.ClassErrorFrame) {
			return fmt.Sprintf(": %s %q", f.Key(), f.FirstMessage)
		}
	}
	return ""
}
