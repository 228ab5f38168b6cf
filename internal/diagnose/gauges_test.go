package diagnose

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

// TestGaugeEvidenceOfAFrozenServer: once /metrics stops answering, the evidence says so —
// how often and for how long — and dates the gauges' last reading instead of carrying it
// forward; when it answers again, the gauges' runs start afresh. A server without /metrics
// (404 from the start) has nothing to say.
func TestGaugeEvidenceOfAFrozenServer(t *testing.T) {
	const timedOut = "GET http://s/metrics: timed out"
	for _, c := range []struct {
		name    string
		samples []events.Sample
		nowS    float64
		want    string
	}{{
		// Read every second until t=8, then five timeouts from t=10 to t=30.
		name: "frozen",
		samples: append(readings(0, 8, 4),
			failed(10, timedOut), failed(15, timedOut), failed(20, timedOut), failed(25, timedOut), failed(30, timedOut)),
		nowS: 32,
		want: "server /metrics timed out 5 times in the last 22 s: its gauges are unknown since t=10 s (last read at t=8.0 s: decode_running = 4)",
	}, {
		// A refusal among the timeouts is counted apart.
		name:    "mixed",
		samples: append(readings(0, 8, 4), failed(10, timedOut), failed(15, "GET http://s/metrics → 503")),
		nowS:    15,
		want:    "server /metrics failed 2 times (1 timed out) in the last 5.0 s: its gauges are unknown since t=10 s (last read at t=8.0 s: decode_running = 4)",
	}, {
		// Answering again: the gauge's run starts at the first reading after the outage.
		name:    "recovered",
		samples: append(append(readings(0, 8, 4), failed(10, timedOut)), readings(12, 20, 4)...),
		nowS:    20,
		want:    "server decode_running = 4 for 8.0 s",
	}, {
		// No /metrics at all: no gauge, no outage.
		name:    "no metrics",
		samples: []events.Sample{failed(0, "GET http://s/metrics → 404"), failed(1, "GET http://s/metrics → 404")},
		nowS:    1,
		want:    "",
	}} {
		t.Run(c.name, func(t *testing.T) {
			a := New(Config{Agents: 1})
			for _, s := range c.samples {
				a.Sample(s)
			}
			assert.Equal(t, c.want, a.gaugeEvidence(c.nowS), "gaugeEvidence(%g)", c.nowS)
		})
	}
}

// readings are samples every second from fromS to toS reading decode_running = v.
func readings(fromS, toS, v float64) []events.Sample {
	var out []events.Sample
	for ts := fromS; ts <= toS; ts++ {
		out = append(out, events.Sample{TS: ts, Server: map[string]float64{events.DecodeRunning: v}})
	}
	return out
}

// failed is a sample at ts whose scrape failed with msg.
func failed(ts float64, msg string) events.Sample {
	return events.Sample{TS: ts, ServerErrors: []string{msg}}
}
