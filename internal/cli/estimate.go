package cli

import (
	"fmt"
	"time"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/shown"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// longRun is the wall time from which `run` says, as it starts, how long it will take: a run
// this long looks hung to someone who expected a few seconds.
const longRun = 2 * time.Minute

// estimateRun is a rough forecast of a run of w against the embedded simulator's profile, in
// simulated seconds: each agent's rounds one after another, a round its think and tool time
// plus a request whose output decodes at the profile's step time with every agent the pacer
// admits decoding at once, over the KV of their contexts half grown; no later than the
// workload's duration. It ignores prefill and queueing, so it errs short.
func estimateRun(w *workloads.Workload, p *simserver.Profile) float64 {
	batch := w.Agents
	if w.Pacer.Slots > 0 {
		batch = min(batch, w.Pacer.Slots)
	}
	grown := w.Context.ReadTokens.Mean() + w.Request.OutputTokens.Mean()
	if w.Tools.Enabled() {
		grown = w.Tools.ResultTokens.Mean() + w.Request.OutputTokens.Mean()
	}
	context := float64(w.Context.SystemTokens+w.Context.InitialTokens) + float64(w.Rounds)/2*grown
	step := p.DecodeStep(batch, int(float64(batch)*context)).Seconds()
	pause := w.ThinkTime.Mean() + w.ToolTime.Mean()
	if w.Tools.Enabled() {
		pause = w.ThinkTime.Mean() + w.Tools.Latency.Mean()
	}
	s := float64(w.Rounds) * (pause.Seconds() + w.Request.OutputTokens.Mean()*step)
	if w.Duration > 0 {
		s = min(s, w.Duration.Seconds())
	}
	return s
}

// longRunNote says, before a run of w on the embedded simulator's profile at speedup starts,
// how long it is expected to take when that is longRun or more of wall time, and how to make
// it shorter; "" for a shorter run.
func longRunNote(w *workloads.Workload, p *simserver.Profile, speedup float64) string {
	simS := estimateRun(w, p)
	if time.Duration(simS/speedup*float64(time.Second)) < longRun {
		return ""
	}
	return fmt.Sprintf("agentsim run: %s is %s × %s: expect about %s, a rough estimate from the profile's decode step; --rounds 1 or a higher --speedup makes it shorter",
		w.Name, plural.Of(w.Agents, "agent"), plural.Of(w.Rounds, "round"), shown.Approx(simS, speedup)+wallAtOne(speedup))
}

// wallAtOne adds, at speedup 1, that simulated and wall time are the same.
func wallAtOne(speedup float64) string {
	if speedup == 1 {
		return " of simulated and wall time alike (speedup 1)"
	}
	return ""
}
