package diagnose

import (
	"fmt"
	"strings"
)

// Stall is how long the run has gone without progress at one instant, and what the live
// watchdog should do about it.
type Stall struct {
	// NoProgressS is the time since any byte flowed or any request ended, in simulated
	// seconds (since the run started when nothing has flowed yet), less the embedded
	// simulator's lag over it (docs/verdicts.md).
	NoProgressS float64
	// Warn is true on the first Stall call of a stall episode, when NoProgressS has reached
	// StallAfter while agents still run: print the warning then, once. An episode ends when
	// progress resumes.
	Warn bool
	// Hang is true while NoProgressS ≥ HangAfter and agents still run: end the run with the
	// verdict. Nothing else ends it: a silent stream may still resume.
	Hang bool
	// LagExplains is set instead of Hang when the run's own lag could explain the quiet, as
	// Analyzer.Doubt would judge it: the lag of its samples is above the pace warning's level
	// (5 % of StallAfter) and the quiet, as measured, is within HangAfter plus the largest of
	// it. The run goes on: what the machine's slowness could have made is not ended as a hang.
	LagExplains bool
	// NothingCanWake is true when only the server can move the run again: every running
	// agent is inside a request silent ≥ StallAfter or waits in the pacer for a permit held
	// by such a request or leaked, none is in start, tool, backoff or think time, and no
	// armed timeout can end an open request. The server may still resume the streams, so the
	// run goes on until HangAfter; until then it is stalled, not deadlocked.
	NothingCanWake bool
	// Stalled counts the open requests silent ≥ StallAfter that are not queueing at the
	// server: what the live status line reports as stalled-streams.
	Stalled int
	// Message describes the state in one line, with units.
	Message string
}

// episodeTolerance is how far, in simulated seconds, progress must move past the last warned
// stall for a new stall episode to begin.
const episodeTolerance = 1e-3

// Stall reads the run at simulated time nowS for the live watchdog. Unlike Verdict it
// remembers one thing: whether the current stall episode was already warned about.
func (a *Analyzer) Stall(nowS float64) Stall {
	v := a.view(nowS)
	st := Stall{NoProgressS: v.quietS, NothingCanWake: a.nothingCanWake(v), Stalled: len(v.stalled)}
	// Agents running tools move on by themselves: no progress while only they run is no stall.
	pending := v.running > v.tools
	// A new episode needs progress past the one warned about, by more than the rounding of
	// "sample time − silence" (sub-microsecond) that moves the same last byte a hair.
	if pending && st.NoProgressS >= a.stallS && a.lastProgressS > a.warnedFor+episodeTolerance {
		st.Warn = true
		a.warnedFor = a.lastProgressS
	}
	st.Hang = pending && st.NoProgressS >= a.hangS
	if st.Hang && a.lagMaxS > lagShare*a.stallS && nowS-a.lastProgressS <= a.hangS+a.lagMaxS {
		st.Hang, st.LagExplains = false, true
	}
	st.Message = a.message(v, st)
	return st
}

// message describes the watch in one line.
func (a *Analyzer) message(v *view, st Stall) string {
	pending := v.running > v.tools
	var b strings.Builder
	noTimeout := "no armed timeout can end the silent requests"
	if a.exec.on {
		// Under exec the timeouts are the harness's own, not the workload's: say what is known
		// of them (the timeout atlas, docs/timeouts.md).
		noTimeout = "agentsim arms no timeout on the harness's requests (" + a.execWakeLine(v.silent) + ")"
	}
	switch {
	case st.Hang && st.NothingCanWake:
		fmt.Fprintf(&b, "no progress for %s, ≥ hang_after (%s), and %s", secs(st.NoProgressS), secs(a.hangS), noTimeout)
	case st.Hang:
		fmt.Fprintf(&b, "no progress for %s, ≥ hang_after (%s)", secs(st.NoProgressS), secs(a.hangS))
	case st.LagExplains:
		fmt.Fprintf(&b, "no progress for %s, ≥ hang_after (%s), but within the run's own lag of %s (simulated): the run goes on",
			secs(st.NoProgressS), secs(a.hangS), secs(a.lagMaxS))
	case st.NothingCanWake:
		fmt.Fprintf(&b, "stalled-streams: no progress for %s and %s; only the server can wake the run (the run ends after %s more without progress)",
			secs(st.NoProgressS), noTimeout, secs(a.hangS-st.NoProgressS))
	case st.NoProgressS >= a.stallS && pending:
		fmt.Fprintf(&b, "no progress for %s", secs(st.NoProgressS))
	default:
		fmt.Fprintf(&b, "progressing: last byte or request end %s ago", secs(st.NoProgressS))
	}
	fmt.Fprintf(&b, "; %d requests in flight", len(a.open))
	if len(v.silent) > 0 {
		fmt.Fprintf(&b, ", %d silent for ≥ %s (longest %s)", len(v.silent), secs(a.stallS), secs(v.silent[0].silenceS(v.nowS)))
	}
	fmt.Fprintf(&b, "; %d agents waiting in the pacer", len(v.waiting))
	if len(v.waiting) > 0 {
		fmt.Fprintf(&b, " (longest %s)", secs(v.waiting[0].waitS))
	}
	if len(v.leaked) > 0 {
		fmt.Fprintf(&b, "; %d leaked permits", len(v.leaked))
	}
	if g := a.gaugeEvidence(v.nowS); g != "" {
		b.WriteString("; " + g)
	}
	return b.String()
}
