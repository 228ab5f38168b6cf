package diagnose

import (
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/scrape"
)

// evidenceGauges are the server gauges quoted in evidence, in order.
var evidenceGauges = []string{events.DecodeRunning, events.PrefillInflight, events.Queued}

// gaugeRun is a server gauge's latest value, since when it has held it, and when it was last
// read.
type gaugeRun struct {
	value  float64
	sinceS float64
	readS  float64
}

// scrapeHealth follows whether the server's /metrics answers: a frozen server stops answering,
// and that is evidence of its own. A run of samples whose scrape failed (every URL) is one
// outage. A server that never answered and never timed out (one without /metrics) has no
// outage to report.
type scrapeHealth struct {
	answered bool    // /metrics has answered at least once
	down     bool    // the latest sample's scrape failed
	fromS    float64 // the first failed sample of the outage
	failed   int     // failed samples in the outage
	timedOut int     // of which timed out
	lastErr  string
}

// onGauges follows the server gauges quoted in evidence, and whether /metrics answers. A
// sample whose scrape failed reads no gauge: the last values are kept as what they were when
// read, never carried forward as measured.
func (a *Analyzer) onGauges(s events.Sample) {
	if len(s.ServerErrors) > 0 && len(s.Server) == 0 {
		a.scrape.fail(s)
		return
	}
	if a.scrape.down || !a.scrape.answered {
		a.scrape = scrapeHealth{answered: true}
		// What a gauge did while unread is unknown: its run starts again now.
		clear(a.gauges)
	}
	for _, name := range evidenceGauges {
		v, ok := s.Server[name]
		if !ok {
			continue
		}
		g := a.gauges[name]
		if g == nil || g.value != v {
			g = &gaugeRun{value: v, sinceS: s.TS}
			a.gauges[name] = g
		}
		g.readS = s.TS
	}
}

// fail counts a sample whose scrape failed.
func (h *scrapeHealth) fail(s events.Sample) {
	if !h.down {
		*h = scrapeHealth{answered: h.answered, down: true, fromS: s.TS}
	}
	h.failed++
	for _, e := range s.ServerErrors {
		if scrape.TimedOut(e) {
			h.timedOut++
			break
		}
	}
	h.lastErr = s.ServerErrors[len(s.ServerErrors)-1]
}

// gaugeEvidence describes the server gauges at nowS, as "server decode_running = 0 for
// 580 s, prefill_inflight = 0 for 580 s"; while /metrics does not answer, that instead —
// "server /metrics timed out 5 times in the last 22 s; last read at t=40 s: decode_running =
// 4" — strong evidence the server is frozen; "" when the server exposes no gauge and its
// /metrics never failed.
func (a *Analyzer) gaugeEvidence(nowS float64) string {
	if h := a.scrape; h.down && (h.answered || h.timedOut > 0) {
		return a.scrapeDownEvidence(nowS)
	}
	var parts []string
	for _, name := range evidenceGauges {
		g := a.gauges[name]
		if g == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s = %s for %s", name, num(g.value), secs(nowS-g.sinceS)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "server " + strings.Join(parts, ", ")
}

// scrapeDownEvidence describes an outage of /metrics and the gauges' last readings, dated.
func (a *Analyzer) scrapeDownEvidence(nowS float64) string {
	h := a.scrape
	var what string
	switch {
	case h.timedOut == h.failed:
		what = fmt.Sprintf("timed out %d time%s", h.failed, plural.S(h.failed))
	case h.timedOut > 0:
		what = fmt.Sprintf("failed %d times (%d timed out)", h.failed, h.timedOut)
	default:
		what = fmt.Sprintf("failed %d time%s (%s)", h.failed, plural.S(h.failed), h.lastErr)
	}
	line := fmt.Sprintf("server /metrics %s in the last %s: its gauges are unknown since t=%s", what, secs(nowS-h.fromS), secs(h.fromS))
	var last []string
	readS := -1.0
	for _, name := range evidenceGauges {
		if g := a.gauges[name]; g != nil {
			last = append(last, fmt.Sprintf("%s = %s", name, num(g.value)))
			readS = max(readS, g.readS)
		}
	}
	if len(last) > 0 {
		line += fmt.Sprintf(" (last read at t=%s: %s)", secs(readS), strings.Join(last, ", "))
	}
	return line
}
