package diagnose

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// runMarks is what the run-level records tell: how the run was stopped and whether it ended.
type runMarks struct {
	// stop is the reason of the first stop event ("" before any): the reason the rounds of
	// agents that finished after it never started. stopS is its time.
	stop  events.EndReason
	stopS float64
	// interruptedS is when the run was interrupted (Ctrl-C); interrupted says whether it was.
	interrupted  bool
	interruptedS float64
	// ended is set by run_end: the harness finished the run.
	ended bool
}

// onRunEvent follows the run-level records (agent −1): stops and the run's end.
func (a *Analyzer) onRunEvent(e events.Event) {
	switch e.Kind {
	case events.Stop:
		if e.SimLagS > 0 {
			a.sim.observe(e.TS, e.SimLagS)
			a.settleSim()
		}
		if a.run.stop == "" {
			a.run.stop, a.run.stopS = e.Reason, e.TS
		}
		if e.Reason == events.EndInterrupted && !a.run.interrupted {
			a.run.interrupted, a.run.interruptedS = true, e.TS
		}
	case events.RunEnd:
		a.run.ended = true
	}
}

// onAgentEnd notes why an agent gave up before a round's request (its warning's reason).
func (a *Analyzer) onAgentEnd(e events.Event) {
	if e.Kind == events.Warning && e.Reason != "" {
		a.agent(e.Agent).ended = e.Reason
	}
}

// counts fills r with the Builder's counts and the rounds the events tell: planned, and not
// started by reason.
func (a *Analyzer) counts(r *results.Results, nowS float64) {
	a.builder.Fill(r, nowS)
	if a.cfg.Rounds <= 0 {
		return
	}
	r.Rounds.Planned = a.cfg.Agents * a.cfg.Rounds
	r.Rounds.NotStarted, r.Rounds.NotStartedReasons = 0, nil
	for _, ag := range a.agents {
		n := a.cfg.Rounds - ag.roundsSent
		if ag.state != events.StateDone || n <= 0 {
			continue
		}
		reason := ag.ended
		switch {
		case reason != "":
		case a.run.stop != "" && ag.sinceS >= a.run.stopS: // it finished when the run stopped
			reason = a.run.stop
		default:
			reason = "unknown"
		}
		if r.Rounds.NotStartedReasons == nil {
			r.Rounds.NotStartedReasons = map[string]int{}
		}
		r.Rounds.NotStarted += n
		r.Rounds.NotStartedReasons[string(reason)] += n
	}
}

// finished reports whether the run is over: the harness recorded its end, or every agent is
// done.
func (a *Analyzer) finished() bool {
	if a.run.ended {
		return true
	}
	for _, ag := range a.agents {
		if ag.state != events.StateDone {
			return false
		}
	}
	return len(a.agents) > 0
}

// nothingRule is the errors verdict of a run that did not do its work: it is over and no
// request finished ok, or most of its planned rounds never started for a reason of their
// own (a context too small for the request, a pacer that refused it) rather than the run's
// duration or stop. Nothing ran is not healthy.
func (a *Analyzer) nothingRule(v *view, r *results.Results) (results.Verdict, bool) {
	if !a.finished() {
		return results.Verdict{}, false
	}
	rounds := r.Rounds
	own := 0
	for reason, n := range rounds.NotStartedReasons {
		switch events.EndReason(reason) {
		case events.EndDuration, events.EndGrace, events.EndWatchdog, events.EndInterrupted:
		default:
			own += n
		}
	}
	q := r.Requests
	switch {
	case q.Sent == 0:
		return results.Verdict{Kind: results.Errors,
			Summary:  fmt.Sprintf("nothing ran: no request was sent in %s; %s", secs(v.nowS), notStarted(rounds)),
			Evidence: a.nothingEvidence(r)}, true
	case q.OK == 0:
		return results.Verdict{Kind: results.Errors,
			Summary: fmt.Sprintf("nothing finished: %d request%s sent, none ok (%d failed, %d cancelled) in %s",
				q.Sent, plural.S(q.Sent), q.Failed, q.Cancelled, secs(v.nowS)),
			Evidence: a.nothingEvidence(r)}, true
	case rounds.Planned > 0 && 2*own > rounds.Planned:
		return results.Verdict{Kind: results.Errors,
			Summary: fmt.Sprintf("most of the run never ran: %s; %s completed",
				notStarted(rounds), plural.Of(rounds.Completed, "round")),
			Evidence: a.nothingEvidence(r)}, true
	}
	return results.Verdict{}, false
}

// nothingEvidence describes what did and did not run.
func (a *Analyzer) nothingEvidence(r *results.Results) []string {
	q := r.Requests
	return []string{
		fmt.Sprintf("requests: %d sent, %d ok, %d failed, %d cancelled; rounds: %d of %d planned completed, %d failed, %d never started",
			q.Sent, q.OK, q.Failed, q.Cancelled, r.Rounds.Completed, r.Rounds.Planned, r.Rounds.Failed, r.Rounds.NotStarted),
	}
}

// notStarted says how many planned rounds never started and why: "60 of 60 planned rounds
// never started (60 max_context_tokens)".
func notStarted(rounds results.Rounds) string {
	if rounds.NotStarted == 0 {
		return fmt.Sprintf("%d planned rounds, none counted as not started", rounds.Planned)
	}
	return fmt.Sprintf("%d of %d planned rounds never started (%s)", rounds.NotStarted, rounds.Planned, reasonList(rounds.NotStartedReasons))
}

// reasonList lists counts by key, most frequent first: "23 http_status 429, 2 timeout_idle".
func reasonList(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(x, y string) int { return cmp.Or(cmp.Compare(m[y], m[x]), cmp.Compare(x, y)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// reasonMeaning explains the not-started reasons in words, for evidence.
var reasonMeaning = map[events.EndReason]string{
	events.EndDuration:     "the workload's duration ended new rounds",
	events.EndGrace:        "the grace period ran out",
	events.EndWatchdog:     "the watchdog ended the run",
	events.EndInterrupted:  "the run was interrupted",
	events.EndContextFull:  "the next request would exceed context.max_context_tokens",
	events.EndPacerRefused: "the pacer refused the request",
}

// runLines is the evidence every verdict carries about the run as a whole: an interruption,
// rounds that never started, and retries.
func (a *Analyzer) runLines(r *results.Results) []string {
	var out []string
	if a.run.interrupted {
		out = append(out, fmt.Sprintf("the run was interrupted at t=%s: no new rounds, requests in flight cancelled; the verdict covers the run up to then",
			secs(a.run.interruptedS)))
	}
	if n := r.Rounds.NotStarted; n > 0 {
		var why []string
		for _, k := range slices.Sorted(maps.Keys(r.Rounds.NotStartedReasons)) {
			if m, ok := reasonMeaning[events.EndReason(k)]; ok {
				why = append(why, k+": "+m)
			}
		}
		out = append(out, fmt.Sprintf("%s; %s", notStarted(r.Rounds), strings.Join(why, "; ")))
	}
	if q := r.Requests; q.Retries > 0 {
		out = append(out, fmt.Sprintf("retries: %d (%s of %d attempts sent; reasons: %s); %d request%s succeeded on a retry, %d failed in the end",
			q.Retries, pct(float64(q.Retries)/float64(max(q.Sent, 1))), q.Sent, reasonList(q.RetryReasons), q.RetriedOK, plural.S(q.RetriedOK), q.Failed))
	}
	return out
}
