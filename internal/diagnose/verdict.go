package diagnose

import (
	"fmt"

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
	}
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
