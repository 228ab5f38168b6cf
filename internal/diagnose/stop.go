package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// stopMark is the moment the harness began stopping the run, and what it found there.
//
// Stopping a run tears down exactly the evidence of a stuck one: the watchdog (or the end of
// the grace period, or Ctrl-C) cancels the requests in flight and the pacer waits, so a
// verdict judged afterwards sees no silent stream and no starving agent, only cancellations.
// The Analyzer therefore judges the run once more just before the first record of the stop,
// and keeps that verdict when it found work stuck in flight.
//
// Live and offline, the records before the stop are the same, with one exception: a sample
// taken at the very instant the stop begins can be fed before the stop live (the watchdog's
// own sample always is) but comes after it in Replay, which feeds events first at equal
// times. At a hang such a sample adds nothing; otherwise (a sampling tick that coincides
// with the end of the grace period) only a byte it reports could move "last byte … ago" by
// up to one sample interval.
type stopMark struct {
	atS     float64         // simulated seconds since the run started
	verdict results.Verdict // judged just before the stop, without the invariants
	// cancelled and abandoned count what the stop ended: requests in flight, and agents
	// taken out of a pacer wait without a permit.
	cancelled, abandoned int
	// watchdog is set when the watchdog stopped the run for lack of progress: its verdict
	// stands whatever its kind (see watchdogVerdict).
	watchdog bool
}

// onStop notices the records of the harness stopping the run: a request cancelled (only the
// run's stop cancels requests: the watchdog, the end of the grace period, an interrupt), or
// an agent that finishes while it waits in the pacer (its wait was cancelled when new rounds
// stopped; a pacer that refuses a request outright, a token budget too small for it, ends
// the agent the same way). The first one fixes the stop verdict, judged before e applies.
func (a *Analyzer) onStop(e events.Event) {
	// Under exec the harness cancels requests of its own (its timeouts): there only a process
	// the run stopped begins the stop, and cancellations count once it has begun.
	cancelled := e.Kind == events.Cancelled && (!a.exec.on || a.stop != nil)
	abandoned := e.Kind == events.AgentDone && e.Agent < len(a.agents) && a.agents[e.Agent].state == events.StatePacerWait
	// Under exec a process the run stops can exit before the proxy sees its requests end.
	stoppedProc := e.Kind == events.AgentDone && e.ExitCode != nil && e.Reason != ""
	if !cancelled && !abandoned && !stoppedProc {
		return
	}
	if a.stop == nil {
		if r := a.open[e.Request]; cancelled && r != nil {
			a.readerSaw(r, e) // what its own reader saw, before the stop is judged
		}
		var r results.Results
		a.counts(&r, e.TS)
		verdict := a.rules(e.TS, &r)
		watchdog := a.run.stop == events.EndWatchdog
		if watchdog && verdict.Kind.Progressing() {
			verdict = a.watchdogVerdict(a.view(e.TS), &r)
		}
		a.stop = &stopMark{atS: e.TS, verdict: verdict, watchdog: watchdog}
	}
	switch {
	case cancelled:
		a.stop.cancelled++
	case abandoned:
		a.stop.abandoned++
	}
}

// stopped returns the verdict judged when the run began stopping, with a line saying so, when
// that verdict found work stuck and nowS is not before the stop.
func (a *Analyzer) stopped(nowS float64) (results.Verdict, bool) {
	s := a.stop
	if s == nil || nowS < s.atS || !(s.verdict.Kind.Stuck() || s.watchdog) {
		return results.Verdict{}, false
	}
	v := s.verdict
	v.Evidence = append(v.Evidence[:len(v.Evidence):len(v.Evidence)], fmt.Sprintf(
		"judged as the run stood at t=%s, when the harness began stopping it: the stop then cancelled %d request%s in flight and %d pacer wait%s",
		secs(s.atS), s.cancelled, plural.S(s.cancelled), s.abandoned, plural.S(s.abandoned)))
	return v, true
}

// watchdogVerdict is the verdict of a run the watchdog ended for lack of progress that no
// other rule calls stuck: never healthy nor slow, whatever finished before. Agents waiting in
// the pacer were starved by it — a rate too low, or permits it did not give — else the run is
// errors: it did not do its work.
func (a *Analyzer) watchdogVerdict(v *view, r *results.Results) results.Verdict {
	ended := fmt.Sprintf("the watchdog ended the run after %s without progress (hang_after %s)", secs(v.quietS), secs(a.hangS))
	if len(v.waiting) > 0 {
		return results.Verdict{
			Kind: results.PacerStarvation,
			Summary: fmt.Sprintf("%s while %d/%d agents waited in the pacer for up to %s: the pacer did not admit requests fast enough to keep the run moving",
				ended, len(v.waiting), v.agents, secs(v.waiting[0].waitS)),
			Evidence: a.withGauges([]string{a.waitersLine(v), a.permitsLine(v)}, v.nowS),
		}
	}
	return results.Verdict{
		Kind:     results.Errors,
		Summary:  fmt.Sprintf("%s: the run did not do its work; %d rounds completed", ended, r.Rounds.Completed),
		Evidence: a.nothingEvidence(r),
	}
}
