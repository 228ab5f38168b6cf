package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/results"
)

// Doubt marks r's verdict unreliable when the run could not hold its speedup (a lag warning,
// JudgeLag) and its own lag could explain what the verdict rests on: a stuck verdict whose
// longest silence is no longer than its threshold plus the largest lag the run measured, a
// server-serialized one whose mean latency that lag reaches, or a slow one whose mean latency
// less that lag is below slow_after. The silences are already
// netted of the lag the samples measured, but that measure misses bytes read late and a
// process starved between two samples by up to the lag itself; a verdict within that margin
// could be the machine's, not the server's. The summary starts "unreliable", the first
// evidence line says why, and the run exits 4 (docs/files.md §5). A stuck verdict so
// explained gives way to what the run was without it (unstuck: slow, healthy, …), the stuck
// one following as evidence: a silence the run's own lag could explain is not blamed on the
// server. Call it once r is filled and its lag judged.
func (a *Analyzer) Doubt(r *results.Results) {
	h := r.Harness
	if h == nil || (h.Warning == "" && h.SimulatorWarning == "") || r.Verdict.Unreliable != "" {
		return
	}
	lag, who := h.Lag.Max, "harness"
	if s := h.SimulatorLag; s != nil && s.Max > lag {
		lag, who = s.Max, "simulator"
	}
	v := &r.Verdict
	var what string
	switch v.Kind {
	case results.StalledStreams, results.PacerStarvation, results.Deadlock:
		threshold, name := a.stallS, "stall_after"
		if v.Kind == results.Deadlock {
			threshold, name = a.hangS, "hang_after"
		}
		longest := a.longestSilenceS(r.SimSeconds)
		if longest > threshold+lag {
			return
		}
		what = fmt.Sprintf("its longest silence, %s, is within %s of %s %s", secs(longest), secs(lag), name, secs(threshold))
	case results.ServerSerialized:
		// One stream progressing at a time is read from the samples; a machine whose lag is
		// as long as a request reads every stream late and samples seldom.
		mean := r.Latency.E2E.Mean
		if lag < mean {
			return
		}
		what = fmt.Sprintf("that lag is as long as the mean latency, %s, over which it saw one stream progress at a time", secs(mean))
	case results.Slow:
		mean := r.Latency.E2E.Mean
		if mean-lag >= a.slowS {
			return
		}
		what = fmt.Sprintf("its mean latency, %s, less that lag is below slow_after %s", secs(mean), secs(a.slowS))
	default:
		return
	}
	speedup := fmt.Sprintf("%g", r.Speedup)
	if a := r.SpeedupAchieved; a != nil {
		speedup = fmt.Sprintf("%s (median %.0f×)", a.Mode, a.Median)
	}
	unreliable := fmt.Sprintf("the machine could not keep up with --speedup %s: the %s lag reached %s (simulated), and %s", speedup, who, secs(lag), what)
	var aside []string
	if v.Kind.Stuck() {
		// A silence the run's own lag could explain is not stuck work: the verdict is what the
		// run was without it, and the stuck one it set aside follows as evidence.
		aside = append([]string{fmt.Sprintf("set aside, as the run's lag could explain it: %s: %s", v.Kind, v.Summary)}, indent(v.Evidence)...)
		*v = a.unstuck(r.SimSeconds, r)
	}
	v.Unreliable = unreliable
	v.Summary = "unreliable: " + v.Summary
	v.Evidence = append(append([]string{"verdict unreliable: " + v.Unreliable + "; the run's own slowness could explain it, so it blames nothing — rerun at the --speedup the pace warning names"}, v.Evidence...), aside...)
}

// indent returns lines each indented by two spaces: evidence of a verdict quoted in another's.
func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

// longestSilenceS is the longest stretch without a byte the Analyzer saw on any request, as
// measured (before any lag), at nowS: ended, cut by the stop, or open.
func (a *Analyzer) longestSilenceS(nowS float64) float64 {
	longest := 0.0
	for _, p := range a.stalls {
		longest = max(longest, p.lengthS)
	}
	for _, r := range a.open {
		longest = max(longest, r.longest.lengthS, r.silenceS(nowS))
	}
	for _, w := range a.view(nowS).waiting {
		longest = max(longest, w.waitS)
	}
	return longest
}
