package diagnose

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

func TestInvariants(t *testing.T) {
	sent := func(ts float64, id string, agent int) events.Event {
		return events.Event{TS: ts, Kind: events.RequestSent, Request: id, Agent: agent}
	}
	pacer := func(acq, rel int64, inUse int) *events.PacerSample {
		return &events.PacerSample{Acquired: acq, Released: rel, InUse: inUse, Limit: 4}
	}
	granted := func(inUse, waiting, granted int) *events.PacerSample {
		return &events.PacerSample{Acquired: int64(inUse), InUse: inUse, Waiting: waiting, Granted: granted, Limit: 4}
	}
	unrecorded := func(p *events.PacerSample, n int64) *events.PacerSample { p.Unrecorded = n; return p }
	waiting := func(inUse, waiting int) *events.PacerSample {
		return &events.PacerSample{Acquired: int64(inUse), InUse: inUse, Waiting: waiting, Limit: 4}
	}
	cases := []struct {
		name    string
		events  []events.Event
		samples []events.Sample
		want    []string // each in some evidence line; none: no invariant broken
		not     []string // in no evidence line
	}{{
		// The events and the samples agree: nothing to report.
		name:    "consistent",
		events:  []events.Event{{TS: 0, Kind: events.PacerAcquired, Permit: 1}, sent(0.1, "a0-r1-0", 0)},
		samples: []events.Sample{{TS: 0.75, InFlight: 1, Pacer: pacer(1, 0, 1)}, {TS: 1.5, InFlight: 1, Pacer: pacer(1, 0, 1)}},
	}, {
		// One mismatched sample is the two views taken a moment apart; two in a row is a
		// lost or phantom request.
		name:   "in flight disagrees",
		events: []events.Event{sent(0.1, "a0-r1-0", 0)},
		samples: []events.Sample{{TS: 0.75, InFlight: 3}, {TS: 1.5, InFlight: 3}, {TS: 2.25, InFlight: 1},
			{TS: 3, InFlight: 2}},
		want: []string{"invariant broken (requests sent = finished + failed + cancelled + in flight) in 1 samples: first at t=1.5 s the events show 1 requests in flight (1 sent − 0 ended) but the sample shows 3"},
	}, {
		// The pacer's own books do not balance, nor do they match the events'.
		name:    "pacer books",
		samples: []events.Sample{{TS: 0.75, Pacer: pacer(5, 2, 1)}, {TS: 1.5, Pacer: pacer(5, 2, 1)}},
		want: []string{"invariant broken (pacer acquired = released + in use) in 1 samples: first at t=1.5 s the pacer reports 5 acquired ≠ 2 released + 1 in use",
			"invariant broken (pacer acquired = released + held) in 1 samples: first at t=1.5 s the events show 0 permits held (0 acquired − 0 released) but the pacer reports 1 in use"},
	}, {
		// 3,294 requests open by the sample, 2,013 by the events, at 10,000 agents: agents that
		// had opened or closed a stream and not yet recorded it. Within those under way, no
		// breach; beyond them, one.
		name:   "requests opened, not yet recorded",
		events: []events.Event{sent(0.1, "a0-r1-0", 0)},
		samples: []events.Sample{{TS: 0.75, InFlight: 3, InFlightUnrecorded: 2}, {TS: 1.5, InFlight: 3, InFlightUnrecorded: 2},
			{TS: 2.25, InFlight: 3, InFlightUnrecorded: 2}},
		not: []string{"invariant broken", "explained by lag"},
	}, {
		name:   "requests beyond those opened",
		events: []events.Event{sent(0.1, "a0-r1-0", 0)},
		samples: []events.Sample{{TS: 0.75, InFlight: 3, InFlightUnrecorded: 1}, {TS: 1.5, InFlight: 3, InFlightUnrecorded: 1},
			{TS: 2.25, InFlight: 3, InFlightUnrecorded: 1}},
		want: []string{"invariant broken (requests sent = finished + failed + cancelled + in flight) in 2 samples: first at t=1.5 s the events show 1 requests in flight (1 sent − 0 ended) but the sample shows 3, beyond the 1 requests opened or closed under way"},
	}, {
		// Two agents have returned their permits to the pacer but not yet run to record it,
		// for longer than any lag the samples measured (10,000 agents beside two CPU hogs:
		// 7,824 held by the events, 3,244 by the pacer): each sample says so, and the pacer and
		// the events differ by no more than those operations under way.
		name:   "releases not yet recorded",
		events: []events.Event{{TS: 0, Kind: events.PacerAcquired, Permit: 1}, {TS: 0, Kind: events.PacerAcquired, Permit: 2, Agent: 1}},
		samples: []events.Sample{{TS: 0.75, Pacer: unrecorded(pacer(2, 2, 0), 2)}, {TS: 1.5, Pacer: unrecorded(pacer(2, 2, 0), 2)},
			{TS: 2.25, Pacer: unrecorded(pacer(2, 2, 0), 2)}},
		not: []string{"invariant broken", "explained by lag"},
	}, {
		// More apart than the operations under way is a breach.
		name:   "more than the releases under way",
		events: []events.Event{{TS: 0, Kind: events.PacerAcquired, Permit: 1}, {TS: 0, Kind: events.PacerAcquired, Permit: 2, Agent: 1}},
		samples: []events.Sample{{TS: 0.75, Pacer: unrecorded(pacer(2, 2, 0), 1)}, {TS: 1.5, Pacer: unrecorded(pacer(2, 2, 0), 1)},
			{TS: 2.25, Pacer: unrecorded(pacer(2, 2, 0), 1)}},
		want: []string{"invariant broken (pacer acquired = released + held) in 2 samples: first at t=1.5 s the events show 2 permits held (2 acquired − 0 released) but the pacer reports 0 in use, beyond the 1 pacer operations under way"},
	}, {
		// Agents wait while permits are free, in two samples 0.75 s apart, but the harness
		// ran 2 s late meanwhile: the woken agents had not run yet. Explained by lag.
		name:   "wake-up within the lag",
		events: []events.Event{{TS: 0, Kind: events.PacerAcquired, Permit: 1}},
		samples: []events.Sample{{TS: 0.75, Pacer: waiting(1, 3)}, {TS: 1.5, LagS: 2, Pacer: waiting(1, 3)},
			{TS: 2.25, Pacer: waiting(4, 0)}},
		want: []string{"invariant (no agent waits while a permit is free) failed in 1 samples for no longer than the harness's scheduling lag (up to 2.0 s): explained by lag, not counted as broken"},
		not:  []string{"invariant broken"},
	}, {
		// The same wait outlasting the lag is a lost wake-up.
		name:   "wake-up beyond the lag",
		events: []events.Event{{TS: 0, Kind: events.PacerAcquired, Permit: 1}},
		samples: []events.Sample{{TS: 0.75, Pacer: waiting(1, 3)}, {TS: 1.5, LagS: 1, Pacer: waiting(1, 3)},
			{TS: 2.25, Pacer: waiting(1, 3)}},
		want: []string{"invariant broken (no agent waits while a permit is free) in 1 samples: first at t=2.2 s 3 agents waited in the pacer while only 1 of 4 permits were in use (a lost wake-up)"},
		not:  []string{"explained by lag"},
	}, {
		// The harness once ran 2 s late; later the events and the sample disagree for 1.5 s
		// over samples that measure no lag: a process once that late can be so again between
		// two samples. Explained by the run's lag, not broken.
		name:   "in flight within the run's earlier lag",
		events: []events.Event{sent(0.1, "a0-r1-0", 0)},
		samples: []events.Sample{{TS: 0.75, LagS: 2, InFlight: 1}, {TS: 1.5, InFlight: 3}, {TS: 2.25, InFlight: 3},
			{TS: 3, InFlight: 3}, {TS: 3.75, InFlight: 1}},
		want: []string{"invariant (requests sent = finished + failed + cancelled + in flight) failed in 2 samples for no longer than the harness's scheduling lag (up to 2.0 s): explained by lag, not counted as broken"},
		not:  []string{"invariant broken"},
	}, {
		// Three permits in use and the fourth granted to a waiter that has not run yet: no
		// lost wake-up, however long the sampler keeps finding it so.
		name: "wake-up granted",
		events: []events.Event{{TS: 0, Kind: events.PacerAcquired, Permit: 1}, {TS: 0, Kind: events.PacerAcquired, Agent: 1, Permit: 2},
			{TS: 0, Kind: events.PacerAcquired, Agent: 2, Permit: 3}},
		samples: []events.Sample{{TS: 0.75, Pacer: granted(3, 2, 1)}, {TS: 1.5, Pacer: granted(3, 2, 1)},
			{TS: 2.25, Pacer: granted(3, 2, 1)}},
		not: []string{"wake-up"},
	}, {
		// A terminal event for a request never sent, and one ending a request twice.
		name: "stray terminal",
		events: []events.Event{sent(0.1, "a0-r1-0", 0), {TS: 1, Kind: events.Done, Request: "a0-r1-0"},
			{TS: 2, Kind: events.Done, Request: "a0-r1-0"}, {TS: 3, Kind: events.Error, Request: "a9-r9-9"}},
		want: []string{"invariant broken (one terminal event per request) 2 times: first a done event at t=2.0 s for request a0-r1-0, which was not in flight"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := New(Config{Agents: 1, PacerKind: "slots", PacerSlots: 4})
			Replay(a, c.events, c.samples)
			got := strings.Join(a.Verdict(a.LastS()).Evidence, "\n")
			if len(c.want) == 0 {
				assert.NotContains(t, got, "invariant broken")
			}
			for _, w := range c.want {
				assert.Contains(t, got, w)
			}
			for _, w := range c.not {
				assert.NotContains(t, got, w)
			}
		})
	}
}

func TestLittle(t *testing.T) {
	cases := []struct {
		name string
		l    little
		want string
	}{
		// The incident's numbers: 30 requests sharing 640 tok/s at 3 750 tokens each.
		{"inherent", little{inFlight: 30, tokensPerReq: 3750, tokPerS: 640, expectedS: 175.8, measuredS: 175},
			"the latency is inherent to the load (measured within ±50 % of expected): 30.0 requests share 640 tok/s, about 21 tok/s each"},
		// Measured three times what the load explains: time goes elsewhere.
		{"not inherent", little{inFlight: 4, tokensPerReq: 1000, tokPerS: 100, expectedS: 40, measuredS: 120},
			"the latency is not explained by the load (measured 3.0× the expected 40 s, above it)"},
		// An interrupted run: only the short requests finished, far below the expectation.
		// The direction is stated, not just the ratio.
		{"below", little{inFlight: 30, tokensPerReq: 3750, tokPerS: 640, expectedS: 175.8, measuredS: 70},
			"the latency is below what the load predicts (measured 0.4× the expected 176 s, below it)"},
		// One agent alone: nothing to share, so not "inherent to the load".
		{"alone", little{inFlight: 1, tokensPerReq: 1000, tokPerS: 20, expectedS: 50, measuredS: 50},
			"with 1.0 requests in flight on average there is no load to share: the latency is the server's own speed for a single stream, 20 tok/s"},
	}
	for _, c := range cases {
		lines := c.l.lines()
		assert.Len(t, lines, 2)
		assert.Contains(t, lines[1], c.want, c.name)
		assert.Contains(t, lines[0], "s expected; measured mean latency ", c.name)
	}
}

func TestSerialViewOutcome(t *testing.T) {
	stream := func(since float64, chunks int) events.Stream {
		return events.Stream{SinceLastByteS: since, SentAgoS: 100, Chunks: chunks}
	}
	one := events.Sample{Streams: []events.Stream{stream(0.1, 50), stream(30, 0), stream(30, 0), stream(30, 0)}}
	many := events.Sample{Streams: []events.Stream{stream(0.1, 50), stream(0.2, 50), stream(0.1, 9), stream(30, 0)}}
	none := events.Sample{Streams: []events.Stream{stream(200, 50), stream(200, 50), stream(200, 9), stream(200, 0)}}
	// Headers alone (no chunk) are not output progress.
	headers := events.Sample{Streams: []events.Stream{stream(0.1, 50), stream(0.1, 0), stream(0.1, 0), stream(30, 0)}}
	few := events.Sample{Streams: []events.Stream{stream(0.1, 50)}}
	cases := []struct {
		name    string
		samples []events.Sample
		want    int
	}{
		{"no crowded sample", []events.Sample{few, few}, viewUnknown},
		{"one at a time", []events.Sample{one, one, headers, many}, viewSerialized},
		{"in parallel", []events.Sample{many, many, one}, viewParallel},
		{"nothing moves", []events.Sample{none, none, one}, viewSilent},
	}
	for _, c := range cases {
		var sv serialView
		for _, s := range c.samples {
			sv.observe(s)
		}
		assert.Equal(t, c.want, sv.outcome(), c.name)
	}
}
