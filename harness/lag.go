package harness

import (
	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
)

// lagSummary converts clock lag statistics to results.json's form.
func lagSummary(s clock.LagStats) results.LagSummary {
	return results.LagSummary{P50: s.P50.Seconds(), P99: s.P99.Seconds(), Max: s.Max.Seconds(), N: s.N}
}

// checkLag gives the live lag warning once, when the p99 lag so far exceeds the limit set by
// stall_after; it returns the warning or "".
func (r *run) checkLag() string {
	if r.lagWarned {
		return ""
	}
	w := diagnose.HarnessLagWarning(lagSummary(r.o.Clock.Lag().Stats()), r.o.Clock.Speedup(), r.o.Workload.Watchdog.StallAfter, 0)
	if w != "" {
		r.lagWarned = true
		w = "warning: " + w
	}
	return w
}

// checkSimLag gives the live warning on the embedded simulator's lag once, as checkLag does
// for the harness's; it returns the warning or "".
func (r *run) checkSimLag() string {
	sim := r.o.Target.SimLag
	if r.simLagWarned || sim == nil {
		return ""
	}
	w := diagnose.SimulatorLagWarning(lagSummary(sim.Lag().Stats()), r.o.Clock.Speedup(), r.o.Workload.Watchdog.StallAfter, 0)
	if w != "" {
		r.simLagWarned = true
		w = "warning: " + w
	}
	return w
}

// harnessResults summarises the run's lag, and the embedded simulator's, for results.json,
// judged against stall_after and the run's median end-to-end latency (diagnose.JudgeLag).
func (r *run) harnessResults(e2eP50 float64) *results.Harness {
	h := &results.Harness{Lag: lagSummary(r.o.Clock.Lag().Stats())}
	if sim := r.o.Target.SimLag; sim != nil {
		l := lagSummary(sim.Lag().Stats())
		h.SimulatorLag = &l
	}
	diagnose.JudgeLag(h, r.o.Clock.Speedup(), r.o.Workload.Watchdog.StallAfter, e2eP50)
	return h
}
