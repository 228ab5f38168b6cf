package diagnose

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// TestProxyRules feeds what a recording proxy sees of a harness and judges it at one
// instant: the proxy rules speak only when the harness has sent nothing for stall_after.
func TestProxyRules(t *testing.T) {
	sent := func(agent int, at float64) events.Event {
		return events.Event{TS: at, Kind: events.RequestSent, Agent: agent, Round: 1, Request: fmt.Sprintf("a%d-r1-0", agent)}
	}
	done := func(agent int, at float64) events.Event { // 4 s after its send
		return events.Event{TS: at, Kind: events.Done, Agent: agent, Round: 1, Request: fmt.Sprintf("a%d-r1-0", agent),
			LatencyS: 4, CompletionTokens: 100, Chunks: 100}
	}
	refused := func(agent int, at float64) events.Event { // llama-server's answer to a prompt past its window
		return events.Event{TS: at, Kind: events.Error, Agent: agent, Round: 1, Request: fmt.Sprintf("a%d-r1-0", agent),
			Class: events.ClassHTTPStatus, Status: 400, Message: "Context size has been exceeded.", LatencyS: 0.1}
	}
	idle := events.Sample{Server: map[string]float64{events.DecodeRunning: 0, events.PrefillInflight: 0, events.Queued: 0}}
	cases := []struct {
		name    string
		evs     []events.Event
		gauges  *events.Sample
		proxy   bool
		at      float64
		kind    results.VerdictKind
		summary string
	}{
		// Everything ended, nothing sent for 299 s, the server idle.
		{"stopped", []events.Event{sent(0, 1), sent(1, 2), done(0, 5), done(1, 6)}, &idle, true, 300,
			results.HarnessStopped, "the harness has sent nothing for 298 s, nothing is in flight and the server is idle"},
		// The same without gauges: the server's load is unknown.
		{"stopped, no gauges", []events.Event{sent(0, 1), done(0, 5)}, nil, true, 300,
			results.HarnessStopped, "nothing is in flight and the server's load is unknown"},
		// Not yet stall_after since the last send: not stopped.
		{"pausing", []events.Event{sent(0, 1), done(0, 5), sent(0, 200), done(0, 204)}, &idle, true, 300,
			results.Healthy, ""},
		// Two open streams, both silent since they were sent.
		{"waits on the server", []events.Event{sent(0, 1), sent(1, 2)}, &idle, true, 300,
			results.StalledStreams, "the harness has sent nothing for 298 s while all 2 of its open streams are silent"},
		// Every request the harness sent was refused, and then it sent nothing more: the
		// refusals lead, in the server's words, and the harness's silence follows.
		{"refused, then stopped", []events.Event{sent(0, 1), sent(1, 2), refused(0, 1.1), refused(1, 2.1)}, &idle, true, 300,
			results.Errors, `2 of 2 finished requests failed (100.0 %): http_status 400 "Context size has been exceeded."`},
		// Not a proxy: a run's rules, which know no harness-stopped.
		{"a run", []events.Event{sent(0, 1), done(0, 5)}, &idle, false, 300,
			results.Healthy, ""},
	}
	for _, tc := range cases {
		a := New(Config{Proxy: tc.proxy})
		for _, e := range tc.evs {
			a.Event(e)
		}
		if tc.gauges != nil {
			s := *tc.gauges
			s.TS = tc.at - 1
			a.Sample(s)
		}
		v := a.Verdict(tc.at)
		assert.Equal(t, tc.kind, v.Kind, "%s: Verdict(%v) = %s: %s", tc.name, tc.at, v.Kind, v.Summary)
		assert.Contains(t, v.Summary, tc.summary, tc.name)
		if tc.proxy {
			assert.Contains(t, v.Evidence[len(v.Evidence)-1], "seen from a recording proxy", tc.name)
		}
	}
}
