package diagnose

import (
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/scrape"
)

// evidenceGauges are the server gauges quoted in evidence, in order.
var evidenceGauges = []string{scrape.DecodeRunning, scrape.PrefillInflight, scrape.Queued}

// gaugeRun is a server gauge's latest value and since when it has held it.
type gaugeRun struct {
	value  float64
	sinceS float64
}

// onGauges follows the server gauges quoted in evidence.
func (a *Analyzer) onGauges(s events.Sample) {
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
	}
}

// gaugeEvidence describes the server gauges at nowS, as "server decode_running = 0 for
// 580 s, prefill_inflight = 0 for 580 s"; "" when the server exposes none.
func (a *Analyzer) gaugeEvidence(nowS float64) string {
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
