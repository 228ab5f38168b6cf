package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/results"
)

// The harness's scheduling lag distorts a run once its p99 exceeds lagShare of the quantities
// it measures: every wait the harness schedules and every timestamp it takes is late by up to
// the lag, so a p99 lag of 5 % of the median end-to-end latency shifts the latencies reported
// visibly, and one of 5 % of the watchdog's stall_after blurs when a stall began. The limit is
// that share of the shorter of the two (stall_after alone while no request has finished).
const (
	lagShare = 0.05
	// lagMinWaits is the number of waits measured before the lag is judged: a single
	// garbage-collection pause at the start of a run is not a trend. smoke measures about 30
	// waits, and about 10 at --speedup 10000 and above, where the sampler misses most ticks.
	lagMinWaits = 5
)

// JudgeLag sets h's warnings on the harness's lag and the embedded simulator's (Warning,
// SimulatorWarning) from the lag it measured, at the run's speedup, against its stall_after
// and its median end-to-end latency e2eP50 in simulated seconds (0: none yet).
//
// A person gets at most one line about the machine's pace: when both lags exceed the limit,
// Warning names both with one recommendation and SimulatorWarning stays empty.
func JudgeLag(h *results.Harness, speedup float64, stallAfter time.Duration, e2eP50 float64) {
	h.Warning = HarnessLagWarning(h.Lag, speedup, stallAfter, e2eP50)
	h.SimulatorWarning = ""
	if h.SimulatorLag != nil {
		h.SimulatorWarning = SimulatorLagWarning(*h.SimulatorLag, speedup, stallAfter, e2eP50)
	}
	if h.Warning != "" && h.SimulatorWarning != "" {
		h.Warning, h.SimulatorWarning = bothLagWarning(h.Lag, *h.SimulatorLag, speedup, stallAfter, e2eP50), ""
	}
}

// JudgeLagAtMax is JudgeLag for a --speedup max run, whose clock ran at a median of median×:
// there is no lower speedup to name, since the run chose its own, so a warning says instead
// that even the speedup the run held could not keep the lag within the limit.
func JudgeLagAtMax(h *results.Harness, median float64, stallAfter time.Duration, e2eP50 float64) {
	JudgeLag(h, 1, stallAfter, e2eP50)
	suffix := fmt.Sprintf("; --speedup max ran at a median of %s× and the machine still did not keep up: "+
		"run it on a less busy machine or with fewer agents", strconv.FormatFloat(median, 'f', 0, 64))
	for _, w := range []*string{&h.Warning, &h.SimulatorWarning} {
		if *w != "" {
			*w += suffix
		}
	}
}

// LivePaceWarning is the one line the harness gives while the run goes, the first time the
// harness's lag h or the simulator's sim (nil: none) exceeds the limit that stall_after sets;
// "" while neither does. It names no speedup: the limit at the end also weighs the run's
// latencies, and the summary's one recommendation is the one to follow.
func LivePaceWarning(h results.LagSummary, sim *results.LagSummary, speedup float64, stallAfter time.Duration) string {
	hw := HarnessLagWarning(h, 1, stallAfter, 0)
	sw := ""
	if sim != nil {
		sw = SimulatorLagWarning(*sim, 1, stallAfter, 0)
	}
	w := cmp.Or(hw, sw)
	if hw != "" && sw != "" {
		w = bothLagWarning(h, *sim, 1, stallAfter, 0)
	}
	if w != "" && speedup > 1 {
		w += fmt.Sprintf(" at --speedup %g; the run's summary names the speedup to use", speedup)
	}
	return w
}

// bothLagWarning is the one line for a harness lag h and a simulator lag sim that both
// exceed the limit: the machine is setting the pace, and the one speedup that brings both
// within it.
func bothLagWarning(h, sim results.LagSummary, speedup float64, stallAfter time.Duration, e2eP50 float64) string {
	limit, of := lagLimit(stallAfter, e2eP50)
	worst := max(h.P99, sim.P99)
	hs, _ := apart(h.P99, limit)
	ss, _ := apart(sim.P99, limit)
	_, lim := apart(min(h.P99, sim.P99), limit) // as many digits as the closer needs
	msg := fmt.Sprintf("harness lag p99 %s and simulator lag p99 %s (simulated) exceed %s (%s): the machine, not the server, is setting the pace, so latencies and stall times are inflated",
		hs, ss, lim, of)
	if speedup > 1 {
		msg += fmt.Sprintf("; use --speedup %s or lower", roundDown(speedup*limit/worst))
	}
	return msg
}

// apart renders a figure that exceeds a limit and the limit, with as many digits as it takes
// for them to read differently ("0.31 s" and "0.30 s", never "0.3 s exceeds 0.3 s").
func apart(v, limit float64) (string, string) {
	a, b := results.Seconds(v), results.Seconds(limit)
	for digits := 2; a == b && digits <= 6; digits++ {
		a, b = fmt.Sprintf("%.*f s", digits, v), fmt.Sprintf("%.*f s", digits, limit)
	}
	return a, b
}

// lagLimit returns the largest p99 lag that does not distort the run, in simulated seconds, and
// what it is relative to; e2eP50 is the median end-to-end latency in simulated seconds (0: none
// yet).
func lagLimit(stallAfter time.Duration, e2eP50 float64) (float64, string) {
	limit := lagShare * stallAfter.Seconds()
	what := fmt.Sprintf("%.0f %% of stall_after %s", 100*lagShare, stallAfter)
	if l := lagShare * e2eP50; e2eP50 > 0 && l < limit {
		limit = l
		what = fmt.Sprintf("%.0f %% of the median end-to-end latency %s", 100*lagShare, results.Seconds(e2eP50))
	}
	return limit, what
}

// HarnessLagWarning returns the warning for the harness's lag s at the given speedup, or ""
// when the lag stays within the limit (see lagLimit). Wall-time lag stays roughly constant as
// the speedup changes, so the simulated lag scales with the speedup, and the warning names the
// speedup that would bring p99 within the limit. The harness gives it live with e2eP50 0.
func HarnessLagWarning(s results.LagSummary, speedup float64, stallAfter time.Duration, e2eP50 float64) string {
	return paceWarning("harness lag", "the harness, not the server,", s, speedup, stallAfter, e2eP50)
}

// SimulatorLagWarning is HarnessLagWarning for the embedded simulator's lag: its own work
// costs wall time the model does not count, and at a speedup the machine cannot keep up with,
// every token comes that much later in simulated time.
func SimulatorLagWarning(s results.LagSummary, speedup float64, stallAfter time.Duration, e2eP50 float64) string {
	return paceWarning("simulator lag", "the simulator, not the server being modelled,", s, speedup, stallAfter, e2eP50)
}

// paceWarning is the warning that the lag named what, of s, exceeds the limit (see lagLimit):
// who is setting the pace instead of the server, and the speedup that would bring p99 within
// the limit.
func paceWarning(what, who string, s results.LagSummary, speedup float64, stallAfter time.Duration, e2eP50 float64) string {
	limit, of := lagLimit(stallAfter, e2eP50)
	if s.N < lagMinWaits || s.P99 <= limit {
		return ""
	}
	p99, lim := apart(s.P99, limit)
	msg := fmt.Sprintf("%s p99 %s (simulated) exceeds %s (%s): %s is setting the pace, so latencies and stall times are inflated",
		what, p99, lim, of, who)
	if speedup > 1 {
		msg += fmt.Sprintf("; use --speedup %s or lower", roundDown(speedup*limit/s.P99))
	}
	return msg
}

// roundDown renders x rounded down to one significant digit times a power of ten, at least 1.
func roundDown(x float64) string {
	if x <= 1 {
		return "1"
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	return fmt.Sprintf("%.0f", math.Floor(x/p)*p)
}
