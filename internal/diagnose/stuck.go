package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// starvationRule is the pacer-starvation verdict: agents wait in the pacer while every permit
// is held by stuck work — requests silent ≥ StallAfter or leaked permits — and they have
// waited ≥ StallAfter, or the run has not moved for HangAfter and nothing but the server can
// wake it. A slots pacer that keeps agents waiting ≥ StallAfter while permits are free (a
// lost wake-up) starves them too.
func (a *Analyzer) starvationRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if len(v.waiting) == 0 {
		return results.Verdict{}, false
	}
	longest := v.waiting[0].waitS
	switch {
	case v.pacerBlocked() && (longest >= a.stallS || (v.hung && a.nothingCanWake(v))):
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
	if d := a.doingLine(v.heldSilent, v.nowS); d != "" {
		ev = append(ev, d)
	}
	ev = append(ev, leakLines(v.leaked, v.nowS)...)
	if len(v.leaked) > 0 && a.cfg.LeakOnTimeout {
		ev = append(ev, "pacer leak_on_timeout is set: a request that times out keeps its permit for ever")
	}
	ev = append(ev, a.wakeLine(v.heldSilent))
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
// inside a request silent ≥ StallAfter that no armed timeout can end, and nothing has moved
// for HangAfter. Before HangAfter the server may still resume the streams: they are stalled.
func (a *Analyzer) deadlockRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if len(v.waiting) > 0 || !v.hung || !a.nothingCanWake(v) {
		return results.Verdict{}, false
	}
	ev := []string{fmt.Sprintf("%d/%d running agents are inside requests that have received no byte for ≥ %s (longest %s); none waits in the pacer",
		v.silentRequesting, v.running, secs(minSilence(v.silent, v.nowS)), secs(v.silent[0].silenceS(v.nowS)))}
	ev = append(ev, a.streamLines(v.silent, v.nowS)...)
	if d := a.doingLine(v.silent, v.nowS); d != "" {
		ev = append(ev, d)
	}
	ev = append(ev, a.wakeLine(v.silent))
	ev = append(ev, fmt.Sprintf("nothing has moved for %s, ≥ the hang threshold of %s: only the server could have woken the run, and it did not",
		secs(v.quietS), secs(a.hangS)))
	if done := v.agents - v.running; done > 0 {
		ev = append(ev, fmt.Sprintf("%d agents finished before the run stopped moving", done))
	}
	return results.Verdict{
		Kind: results.Deadlock,
		Summary: fmt.Sprintf("every running agent (%d/%d) waits on a request silent for ≥ %s and %s: nothing can wake the run",
			v.running, v.agents, secs(minSilence(v.silent, v.nowS)), a.noTimeoutPhrase()),
		Evidence: a.withGauges(ev, v.nowS),
	}, true
}

// stalledRule is the stalled-streams verdict: open streams silent ≥ StallAfter that neither
// the pacer, nor the server's queue, nor server serialisation explains — or, once every
// stall has ended, streams that were silent that long and then went on (recovered).
func (a *Analyzer) stalledRule(v *view, r *results.Results) (results.Verdict, bool) {
	if len(v.stalled) == 0 || v.explainsSilence() {
		return a.recoveredRule(v, r)
	}
	quiet := v.quietS
	rest := fmt.Sprintf("while the rest of the run still moves (last byte or request end %s ago)", secs(quiet))
	if quiet >= a.stallS {
		rest = fmt.Sprintf("and nothing else has moved for %s either", secs(quiet))
	}
	ev := a.streamLines(v.stalled, v.nowS)
	if d := a.doingLine(v.stalled, v.nowS); d != "" {
		ev = append(ev, d)
	}
	ev = append(ev, fmt.Sprintf("%d of %d open requests are silent; %d agents wait in the pacer", len(v.stalled), len(a.open), len(v.waiting)))
	if len(v.queued) > 0 {
		ev = append(ev, a.queuedLine(v))
	}
	ev = append(ev, a.wakeLine(v.stalled))
	if quiet >= a.stallS && a.nothingCanWake(v) {
		ev = append(ev, fmt.Sprintf("only the server can wake the run now: it is a deadlock if nothing moves for the hang threshold of %s (%s to go)",
			secs(a.hangS), secs(a.hangS-quiet)))
	}
	return results.Verdict{
		Kind: results.StalledStreams,
		Summary: fmt.Sprintf("%d open stream%s received no byte for ≥ %s (longest %s) %s",
			len(v.stalled), plural.S(len(v.stalled)), secs(minSilence(v.stalled, v.nowS)), secs(v.stalled[0].silenceS(v.nowS)), rest),
		Evidence: a.withGauges(ev, v.nowS),
	}, true
}

// queuedLine says which silent requests are queueing at the server rather than stalled.
func (a *Analyzer) queuedLine(v *view) string {
	return fmt.Sprintf("%d silent request%s have no output token yet while the server reports %s requests queued: queueing, not a stall (longest wait %s)",
		len(v.queued), plural.S(len(v.queued)), num(a.gauges[events.Queued].value), secs(v.queued[0].silenceS(v.nowS)))
}
