package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// minSilence returns the shortest silence among rs at nowS, in seconds.
func minSilence(rs []*request, nowS float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	m := rs[0].silenceS(nowS)
	for _, r := range rs[1:] {
		m = min(m, r.silenceS(nowS))
	}
	return m
}

// waitersLine describes the agents waiting in the pacer.
func (a *Analyzer) waitersLine(v *view) string {
	ids := make([]int, len(v.waiting))
	for i, w := range v.waiting {
		ids[i] = w.agent
	}
	return fmt.Sprintf("%d/%d agents have waited in the pacer for %s (%s)",
		len(v.waiting), v.agents, span(v.waiting[len(v.waiting)-1].waitS, v.waiting[0].waitS), agentList(ids))
}

// permitsLine describes who holds the pacer's permits.
func (a *Analyzer) permitsLine(v *view) string {
	limit := "an unknown number of"
	if v.limit > 0 {
		limit = fmt.Sprint(v.limit)
	}
	s := fmt.Sprintf("%d of %s permits held: %d by requests silent for ≥ %s, %d leaked, %d by work still moving",
		len(v.held), limit, len(v.heldSilent), secs(a.stallS), len(v.leaked), len(v.held)-len(v.heldSilent)-len(v.leaked))
	if len(v.heldSilent) > 0 {
		s += fmt.Sprintf(" (the silent ones for %s)", span(minSilence(v.heldSilent, v.nowS), maxSilence(v.heldSilent, v.nowS)))
	}
	return s
}

func maxSilence(rs []*request, nowS float64) float64 {
	m := 0.0
	for _, r := range rs {
		m = max(m, r.silenceS(nowS))
	}
	return m
}

// streamLines names silent requests, one line each, up to maxNamed.
func (a *Analyzer) streamLines(rs []*request, nowS float64) []string {
	var out []string
	for i, r := range rs {
		if i == maxNamed {
			out = append(out, fmt.Sprintf("… and %d more silent requests", len(rs)-maxNamed))
			break
		}
		s := fmt.Sprintf("request %s (agent %d", r.id, r.agent)
		if r.permit != 0 && r.permit < 1<<63 {
			s += fmt.Sprintf(", permit %d", r.permit)
		}
		got := fmt.Sprintf("%d chunk%s received", r.chunks, plural.S(r.chunks))
		if r.queued() {
			got = "no output token received"
		}
		out = append(out, fmt.Sprintf("%s): no byte for %s, sent %s ago, %s", s, secs(r.silenceS(nowS)), secs(nowS-r.sentS), got))
	}
	return out
}

// leakLines names leaked permits, one line each, up to maxNamed.
func leakLines(ps []*permit, nowS float64) []string {
	var out []string
	for i, p := range ps {
		if i == maxNamed {
			out = append(out, fmt.Sprintf("… and %d more leaked permits", len(ps)-maxNamed))
			break
		}
		out = append(out, fmt.Sprintf("permit %d (agent %d) leaked at t=%s: its request ended without releasing it; held for %s",
			p.id, p.agent, secs(p.leakedS), secs(nowS-p.acquiredS)))
	}
	return out
}

// wakeLine says whether an armed timeout can still end the silent requests rs: the
// whole-request and idle timeouts can end any, the TTFT timeout only those without output.
func (a *Analyzer) wakeLine(rs []*request) string {
	if a.exec.on {
		return a.execWakeLine(rs)
	}
	t := a.cfg.Timeouts
	switch {
	case !t.Armed():
		return "no timeout is armed (timeout, ttft_timeout and idle_timeout are 0 s): nothing ends a silent request"
	case len(a.open) == 0:
		return "timeouts are armed but no request is open for them to end"
	}
	can := 0
	for _, r := range rs {
		if canEnd(t, r) {
			can++
		}
	}
	switch {
	case can == len(rs):
		return "timeouts are armed: the silent requests will end when they fire"
	case can == 0:
		return fmt.Sprintf("only ttft_timeout (%s) is armed and every silent request already received its first token: no armed timeout can end them",
			secs(t.TTFT.Seconds()))
	}
	return fmt.Sprintf("only ttft_timeout (%s) is armed: it can end the %d silent requests still without a token, not the other %d",
		secs(t.TTFT.Seconds()), can, len(rs)-can)
}

// noTimeoutPhrase says, for a summary, that no timeout can end the silent requests.
func (a *Analyzer) noTimeoutPhrase() string {
	switch {
	case a.exec.on:
		return "agentsim arms no timeout on the harness's requests"
	case a.cfg.Timeouts.Armed():
		return "no armed timeout can end one"
	}
	return "no timeout is armed"
}

// withGauges appends the server gauges, when the server exposes any, to ev.
func (a *Analyzer) withGauges(ev []string, nowS float64) []string {
	if g := a.gaugeEvidence(nowS); g != "" {
		ev = append(ev, fmt.Sprintf("%s while %d requests are in flight", g, len(a.open)))
	}
	return ev
}

// pastStalls describes finished requests that once went StallAfter without a byte.
func (a *Analyzer) pastStalls(r *results.Results) []string {
	if r.Requests.Stalled == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d request%s went ≥ %s without a byte before ending, none of them a stall: each waited for its first token in the server's queue, or was cancelled by the run's stop",
		r.Requests.Stalled, plural.S(r.Requests.Stalled), secs(a.stallS))}
}
