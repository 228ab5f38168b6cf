package diagnose

import (
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// proxyMarks is what the proxy's view adds: when the harness last sent a request.
type proxyMarks struct {
	sent      bool
	lastSentS float64
}

// onProxyEvent follows the harness's sends.
func (a *Analyzer) onProxyEvent(e events.Event) {
	if e.Kind == events.RequestSent {
		a.proxy.sent = true
		a.proxy.lastSentS = max(a.proxy.lastSentS, e.TS)
	}
}

// proxyRule judges a real harness watched through the recording proxy (Config.Proxy) once
// it has sent nothing for ≥ StallAfter: with nothing of it in flight, the harness itself has
// stopped (harness-stopped); with every one of its open streams silent ≥ StallAfter, it waits
// on the server (stalled-streams). A harness that still sends, or whose streams still move,
// is judged by the other rules.
func (a *Analyzer) proxyRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if !a.cfg.Proxy || a.exec.on { // exec's processes are judged one by one: execRule
		return results.Verdict{}, false
	}
	quiet := v.nowS - a.proxy.lastSentS
	switch {
	case quiet < a.stallS:
		return results.Verdict{}, false
	case len(a.open) == 0:
		return a.harnessStopped(v, quiet), true
	case len(v.silent) == len(a.open):
		return a.harnessWaits(v, quiet), true
	}
	return results.Verdict{}, false
}

// harnessStopped describes a harness that sends nothing with nothing in flight.
func (a *Analyzer) harnessStopped(v *view, quiet float64) results.Verdict {
	server, known := a.serverLoad(v.nowS)
	sent := fmt.Sprintf("the harness has sent nothing for %s", secs(quiet))
	if !a.proxy.sent {
		sent = fmt.Sprintf("the harness has sent nothing in the %s since the recording began", secs(v.nowS))
	}
	summary := fmt.Sprintf("%s, nothing is in flight and %s: the harness itself is stuck (its pacer or scheduler) or done", sent, server)
	ev := []string{
		fmt.Sprintf("%d requests sent, %d ended; none in flight since t=%s (last byte or request end %s ago)",
			a.sent, a.ended, secs(a.lastProgressS), secs(v.nowS-a.lastProgressS)),
		"nothing the server does can hold the harness now: every request it sent has ended, so whatever it waits on is inside it — its pacer, its scheduler, a lock, a tool call — or it has finished",
	}
	if !known {
		ev = append(ev, "the server's gauges cannot clear it: read them with --metrics-url to tell an idle server from one busy with other clients' work")
	}
	return results.Verdict{Kind: results.HarnessStopped, Summary: summary, Evidence: a.withGauges(ev, v.nowS)}
}

// harnessWaits describes a harness that sends nothing while all its open streams are silent.
func (a *Analyzer) harnessWaits(v *view, quiet float64) results.Verdict {
	n := len(a.open)
	all := fmt.Sprintf("all %d of its open streams are", n)
	if n == 1 {
		all = "its one open stream is"
	}
	ev := a.streamLines(v.silent, v.nowS)
	ev = append(ev,
		fmt.Sprintf("the harness sent its last request %s ago; no byte or request end for %s", secs(quiet), secs(v.quietS)),
		fmt.Sprintf("a proxy cannot see the harness's pacer: if it admits %s at once, every slot is held by these silent streams (what agentsim run calls pacer-starvation); the server must answer or the harness time them out", plural.Of(n, "request")))
	server, _ := a.serverLoad(v.nowS)
	return results.Verdict{
		Kind: results.StalledStreams,
		Summary: fmt.Sprintf("the harness has sent nothing for %s while %s silent (no byte for ≥ %s, longest %s) and %s: it waits on the server",
			secs(quiet), all, secs(minSilence(v.silent, v.nowS)), secs(v.silent[0].silenceS(v.nowS)), server),
		Evidence: a.withGauges(ev, v.nowS),
	}
}

// serverLoad says what the server's gauges show — "the server is idle", busy, or unknown —
// and whether the gauges are known at all.
func (a *Analyzer) serverLoad(nowS float64) (string, bool) {
	var busy []string
	known := false
	for _, name := range evidenceGauges {
		g := a.gauges[name]
		if g == nil {
			continue
		}
		known = true
		if g.value > 0 {
			busy = append(busy, fmt.Sprintf("%s = %s", name, num(g.value)))
		}
	}
	switch {
	case !known:
		return "the server's load is unknown (no gauges: --metrics-url)", false
	case len(busy) == 0:
		return "the server is idle", true
	}
	return "the server reports work (" + strings.Join(busy, ", ") + ")", true
}

// proxyLines says, for a proxy's verdict, what a proxy cannot see.
func (a *Analyzer) proxyLines() []string {
	if !a.cfg.Proxy {
		return nil
	}
	return []string{fmt.Sprintf("seen from a recording proxy: %d session%s as agents; the harness's pacer, tool and think time are invisible to it, so the time between a session's requests counts as thinking",
		len(a.agents), plural.S(len(a.agents)))}
}
