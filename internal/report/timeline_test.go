package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

// TestSpread: tokens spread over the bins their streaming covers, in proportion to the time in
// each; a request without streaming time lands in its end's bin.
func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		from, to, amount float64
		want             []float64
	}{
		// 2.5 s of streaming over bins of 1 s: half, one, one.
		{0.5, 3, 50, []float64{10, 20, 20, 0}},
		// Within one bin.
		{1.2, 1.7, 7, []float64{0, 7, 0, 0}},
		// No time: all at the end.
		{2.5, 2.5, 4, []float64{0, 0, 4, 0}},
	} {
		bins := make([]float64, 4)
		spread(bins, 1, tc.from, tc.to, tc.amount)
		assert.InDeltaSlice(t, tc.want, bins, 1e-9, "spread(%g, %g, %g)", tc.from, tc.to, tc.amount)
	}
}

// TestBuildTimelines: silent streams are the open ones at or past stall_after; states stack in
// their fixed order; the output rate integrates back to the tokens of successful requests.
func TestBuildTimelines(t *testing.T) {
	done := events.Event{TS: 10, Kind: events.Done, Request: "a0-r1-0", CompletionTokens: 300}
	r := &Run{StallAfterS: 5, Events: []events.Event{
		{TS: 0, Kind: events.RequestSent, Request: "a0-r1-0"},
		{TS: 4, Kind: events.FirstReasoning, Request: "a0-r1-0"}, done,
	}, Samples: []events.Sample{
		{TS: 1, InFlight: 2, Agents: map[events.State]int{events.StateRequesting: 2},
			Streams: []events.Stream{{SinceLastByteS: 5}, {SinceLastByteS: 4.9}},
			Pacer:   &events.PacerSample{InUse: 2, Waiting: 1, Limit: 2}},
	}}
	tl := BuildTimelines(r)
	assert.Equal(t, []float64{1}, tl.Silent.Y)
	assert.Equal(t, []float64{2}, tl.Open.Y)
	assert.Equal(t, []float64{2}, tl.Holders.Y)
	assert.Equal(t, []float64{1}, tl.Waiters.Y)
	assert.Equal(t, "requesting", tl.States[0].Name)
	assert.Equal(t, []float64{2}, tl.States[0].Y)
	total := 0.0
	for _, y := range tl.TokS.Y {
		total += y * tl.BinS
	}
	assert.InDelta(t, 300, total, 1e-9)
}
