package harness

import (
	"fmt"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
)

// lagSummary converts clock lag statistics to results.json's form.
func lagSummary(s clock.LagStats) results.LagSummary {
	return results.LagSummary{P50: s.P50.Seconds(), P99: s.P99.Seconds(), Max: s.Max.Seconds(), N: s.N}
}

// checkPace gives the live warning about the machine's pace once: one line, the first time
// the p99 lag so far of the harness or of the embedded simulator exceeds the limit set by
// stall_after (diagnose.LivePaceWarning); it returns the warning or "".
func (r *run) checkPace() string {
	if r.paceWarned {
		return ""
	}
	var sim *results.LagSummary
	if s := r.o.Target.SimLag; s != nil {
		l := lagSummary(s.Lag().Stats())
		sim = &l
	}
	speedup := r.o.Clock.Speedup()
	if r.pace != nil {
		speedup = 1 // no fixed speedup to name: the controller is slowing the clock
	}
	w := diagnose.LivePaceWarning(lagSummary(r.o.Clock.Lag().Stats()), sim, speedup, r.o.Workload.Watchdog.StallAfter)
	if w != "" && r.pace != nil {
		w += fmt.Sprintf(" at --speedup max (now %.0f×), faster than the clock slowed", r.o.Clock.Speedup())
	}
	if w != "" {
		r.paceWarned = true
		w = "warning: " + w
	}
	return w
}

// harnessResults summarises the run's lag, and the embedded simulator's, for results.json,
// judged at speedup (a --speedup max run's median) against stall_after and the run's median
// end-to-end latency (diagnose.JudgeLag).
func (r *run) harnessResults(speedup, e2eP50 float64) *results.Harness {
	h := &results.Harness{Lag: lagSummary(r.o.Clock.Lag().Stats())}
	if sim := r.o.Target.SimLag; sim != nil {
		l := lagSummary(sim.Lag().Stats())
		h.SimulatorLag = &l
	}
	if r.o.Clock.Adjusts() {
		diagnose.JudgeLagAtMax(h, speedup, r.o.Workload.Watchdog.StallAfter, e2eP50)
	} else {
		diagnose.JudgeLag(h, speedup, r.o.Workload.Watchdog.StallAfter, e2eP50)
	}
	return h
}
