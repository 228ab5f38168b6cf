package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/results"
)

// starvationRule is the pacer-starvation verdict: agents wait in the pacer while every permit
// is held by stuck work — requests silent ≥ StallAfter or leaked permits — and they have
// waited ≥ StallAfter or nothing can wake the run. A slots pacer that keeps agents waiting
// ≥ StallAfter while permits are free (a lost wake-up) starves them too.
func (a *Analyzer) starvationRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if len(v.waiting) == 0 {
		return results.Verdict{}, false
	}
	longest := v.waiting[0].waitS
	switch {
	case v.pacerBlocked() && (longest >= a.stallS || a.nothingCanWake(v)):
		return a.starvation(v), true
	case a.inv.wakeUp.broken > 0 && v.limit > len(v.held) && longest >= a.stallS:
		return a.lostWakeUp(v), true
	}
	return results.Verdict{}, false
}

// starvation describes agents starved by permits held by stuck work.
func (a *Analyzer) starvation(v *view) results.Verdict {
	held := fmt.Sprintf("all %d permits were held by", len(v.held))
	switch {
	case len(v.leaked) == 0:
		held += fmt.Sprintf(" requests that had received no byte for ≥ %s", secs(minSilence(v.heldSilent, v.nowS)))
	case len(v.heldSilent) == 0:
		held = fmt.Sprintf("all %d permits were leaked by requests that ended without releasing them", len(v.held))
	default:
		held += fmt.Sprintf(" %d requests silent for ≥ %s and %d leaked permits",
			len(v.heldSilent), secs(minSilence(v.heldSilent, v.nowS)), len(v.leaked))
	}
	ev := []string{a.waitersLine(v), a.permitsLine(v)}
	ev = append(ev, a.streamLines(v.heldSilent, v.nowS)...)
	ev = append(ev, leakLines(v.leaked, v.nowS)...)
	if len(v.leaked) > 0 && a.cfg.LeakOnTimeout {
		ev = append(ev, "pacer leak_on_timeout is set: a request that times out keeps its permit for ever")
	}
	ev = append(ev, a.wakeLine())
	return results.Verdict{
		Kind: results.PacerStarvation,
		Summary: fmt.Sprintf("%d/%d agents starved in the pacer for up to %s while %s",
			len(v.waiting), v.agents, secs(v.waiting[0].waitS), held),
		Evidence: a.withGauges(ev, v.nowS),
	}
}

// lostWakeUp describes agents left waiting while permits are free.
func (a *Analyzer) lostWakeUp(v *view) results.Verdict {
	return results.Verdict{
		Kind: results.PacerStarvation,
		Summary: fmt.Sprintf("%d/%d agents starved in the pacer for up to %s while only %d of %d permits were held (a lost wake-up)",
			len(v.waiting), v.agents, secs(v.waiting[0].waitS), len(v.held), v.limit),
		Evidence: a.withGauges([]string{a.waitersLine(v), a.permitsLine(v)}, v.nowS),
	}
}

// deadlockRule is the deadlock verdict: no agent waits in the pacer, every running agent is
// inside a request silent ≥ StallAfter, and no timeout is armed.
func (a *Analyzer) deadlockRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if len(v.waiting) > 0 || !a.nothingCanWake(v) {
		return results.Verdict{}, false
	}
	ev := []string{fmt.Sprintf("%d/%d running agents are inside requests that have received no byte for ≥ %s (longest %s); none waits in the pacer",
		v.silentRequesting, v.running, secs(minSilence(v.silent, v.nowS)), secs(v.silent[0].silenceS(v.nowS)))}
	ev = append(ev, a.streamLines(v.silent, v.nowS)...)
	ev = append(ev, a.wakeLine())
	if done := v.agents - v.running; done > 0 {
		ev = append(ev, fmt.Sprintf("%d agents finished before the run stopped moving", done))
	}
	return results.Verdict{
		Kind: results.Deadlock,
		Summary: fmt.Sprintf("every running agent (%d/%d) waits on a request silent for ≥ %s and no timeout is armed: nothing can wake the run",
			v.running, v.agents, secs(minSilence(v.silent, v.nowS))),
		Evidence: a.withGauges(ev, v.nowS),
	}, true
}

// stalledRule is the stalled-streams verdict: open streams silent ≥ StallAfter that neither
// the pacer nor server serialisation explains.
func (a *Analyzer) stalledRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if len(v.silent) == 0 || v.explainsSilence() {
		return results.Verdict{}, false
	}
	quiet := v.nowS - a.lastProgressS
	rest := fmt.Sprintf("while the rest of the run still moves (last byte or request end %s ago)", secs(quiet))
	if quiet >= a.stallS {
		rest = fmt.Sprintf("and nothing else has moved for %s either", secs(quiet))
	}
	ev := a.streamLines(v.silent, v.nowS)
	ev = append(ev, fmt.Sprintf("%d of %d open requests are silent; %d agents wait in the pacer", len(v.silent), len(a.open), len(v.waiting)))
	ev = append(ev, a.wakeLine())
	return results.Verdict{
		Kind: results.StalledStreams,
		Summary: fmt.Sprintf("%d open stream%s received no byte for ≥ %s (longest %s) %s",
			len(v.silent), plural(len(v.silent)), secs(minSilence(v.silent, v.nowS)), secs(v.silent[0].silenceS(v.nowS)), rest),
		Evidence: a.withGauges(ev, v.nowS),
	}, true
}
