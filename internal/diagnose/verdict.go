package diagnose

import (
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/events"

	"github.com/agentsim/agentsim/results"
)

// rule is one verdict's test: the verdict and true when it applies.
type rule func(v *view, r *results.Results) (results.Verdict, bool)

// Verdict judges the run at simulated time nowS (seconds since the run started). Once the
// harness has begun stopping the run, a stuck verdict found just before the stop stands.
func (a *Analyzer) Verdict(nowS float64) results.Verdict {
	var r results.Results
	a.counts(&r, nowS)
	return a.judge(nowS, &r)
}

// judge returns the verdict at nowS from the counts in r, with the broken invariants added
// to its evidence. Once the run has begun stopping, work found stuck at the stop outlives the
// cancellations that followed (see stopMark).
func (a *Analyzer) judge(nowS float64, r *results.Results) results.Verdict {
	verdict, ok := a.stopped(nowS)
	if !ok {
		verdict = a.rules(nowS, r)
		if a.run.stop == events.EndWatchdog && nowS >= a.run.stopS && verdict.Kind.Progressing() {
			verdict = a.watchdogVerdict(a.view(nowS), r) // a stop that cancelled nothing
		}
	}
	return a.finish(nowS, r, verdict)
}

// finish adds to verdict at nowS what every verdict carries: errors leading when most finished
// requests failed, the interruption, and the lines on the run, its invariants, the proxy and
// exec.
func (a *Analyzer) finish(nowS float64, r *results.Results, verdict results.Verdict) results.Verdict {
	verdict = a.errorsLead(r, verdict)
	if a.run.interrupted && nowS >= a.run.interruptedS {
		verdict.Summary = fmt.Sprintf("interrupted at t=%s: %s", secs(a.run.interruptedS), verdict.Summary)
	}
	verdict.Evidence = append(verdict.Evidence, a.runLines(r)...)
	verdict.Evidence = append(verdict.Evidence, a.invariantEvidence()...)
	verdict.Evidence = append(verdict.Evidence, a.proxyLines()...)
	verdict.Evidence = append(verdict.Evidence, a.execLines()...)
	if verdict.Evidence == nil {
		verdict.Evidence = []string{}
	}
	return verdict
}

// rules applies the rules in results.VerdictKinds order to the view at nowS and the counts in
// r: when several apply, the first wins.
func (a *Analyzer) rules(nowS float64, r *results.Results) results.Verdict {
	v := a.view(nowS)
	v.ser = a.serialization(nowS, r)
	for _, try := range []rule{a.execRule, a.proxyRule, a.starvationRule, a.deadlockRule, a.stalledRule, a.serializedRule, a.execExitRule, a.errorsRule, a.nothingRule, a.slowRule} {
		if verdict, found := try(v, r); found {
			return verdict
		}
	}
	return a.healthy(v, r)
}

// unstuck is the verdict at nowS with the rules of stuck work (pacer-starvation, deadlock,
// stalled-streams) left out: what the run was if no silence counts as stuck (Doubt).
func (a *Analyzer) unstuck(nowS float64, r *results.Results) results.Verdict {
	v := a.view(nowS)
	v.ser = a.serialization(nowS, r)
	verdict, found := results.Verdict{}, false
	for _, try := range []rule{a.execRule, a.proxyRule, a.serializedRule, a.execExitRule, a.errorsRule, a.nothingRule, a.slowRule} {
		if verdict, found = try(v, r); found {
			break
		}
	}
	if !found {
		verdict = a.healthy(v, r)
	}
	return a.finish(nowS, r, verdict)
}

// errorsLead returns the errors verdict, with verdict as evidence after its own, when most
// finished requests failed by the server's answer (an HTTP status or an error frame) and
// verdict is another: the worst thing that happened is the headline — a run whose requests
// mostly got the server's refusal is not, first, a run of slow prefills or of a harness gone
// quiet. Timeouts and resets are the harness's own observations of something else (a stuck
// server, a leaked permit), which verdict names. Otherwise it returns verdict.
func (a *Analyzer) errorsLead(r *results.Results, verdict results.Verdict) results.Verdict {
	q := r.Requests
	answered := 0
	for key, n := range a.failures {
		class, _, _ := strings.Cut(key, " ")
		if events.Class(class) == events.ClassHTTPStatus || events.Class(class) == events.ClassErrorFrame {
			answered += n
		}
	}
	if verdict.Kind == results.Errors || 2*answered <= q.OK+q.Failed {
		return verdict
	}
	lead, ok := a.errorsRule(nil, r)
	if !ok {
		return verdict
	}
	lead.Evidence = append(lead.Evidence, fmt.Sprintf("besides the errors, the run was %s: %s", verdict.Kind, verdict.Summary))
	for _, line := range verdict.Evidence {
		lead.Evidence = append(lead.Evidence, "  "+line)
	}
	return lead
}
