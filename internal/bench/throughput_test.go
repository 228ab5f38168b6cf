package bench

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/agents"
)

var t0 = time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// fakeStream is a completed call whose tokens arrive perFrame at a time every stepMS from
// firstMS, followed by the finish, usage and [DONE] frames at the last token's time.
func fakeStream(firstMS, stepMS, tokens, perFrame int) (agents.Result, []time.Time) {
	var frames []time.Time
	frames = append(frames, at(0)) // the role frame, before the first token
	n := (tokens + perFrame - 1) / perFrame
	for i := range n {
		frames = append(frames, at(firstMS+i*stepMS))
	}
	last := frames[len(frames)-1]
	frames = append(frames, last, last, last)
	r := agents.Result{Sent: t0, FirstContent: at(firstMS), Last: last, End: last, Chunks: len(frames),
		Usage: agents.Usage{Completion: tokens}}
	return r, frames
}

func point(streams ...func() (agents.Result, []time.Time)) *Point {
	p := &Point{Start: t0}
	for _, s := range streams {
		r, f := s()
		p.Calls = append(p.Calls, r)
		p.chunks = append(p.chunks, f)
	}
	return p
}

func fake(firstMS, stepMS, tokens, perFrame int) func() (agents.Result, []time.Time) {
	return func() (agents.Result, []time.Time) { return fakeStream(firstMS, stepMS, tokens, perFrame) }
}

// TestDecode checks the steady-phase aggregate rate on hand-made streams.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Point
		want Decode
	}{
		// One stream, 11 tokens one every 100 ms from 1 s: 10 tokens after the first in 1 s.
		{"one stream", point(fake(1000, 100, 11, 1)), Decode{TokPerS: 10, Peak: 1, Threshold: 1, FromS: 1, ToS: 2}},
		// Two streams of 10 tok/s overlapping from 1.5 s to 1.9 s: 20 tok/s there.
		{"two overlapping", point(fake(1000, 100, 10, 1), fake(1500, 100, 10, 1)),
			Decode{TokPerS: 20, Peak: 2, Threshold: 2, FromS: 1.5, ToS: 1.9}},
		// Streams that merely touch never overlap: the peak is one.
		{"touching", point(fake(1000, 100, 11, 1), fake(2000, 100, 11, 1)),
			Decode{TokPerS: 10, Peak: 1, Threshold: 1, FromS: 1, ToS: 3}},
		// Ten streams of 10 tok/s, the tenth starting late: ≥ 9 decoding counts as steady, from
		// 1 s to 3 s: 90 tok/s for 1.5 s, then 100 tok/s for 0.5 s.
		{"ninety percent", point(fake(1000, 100, 21, 1), fake(1000, 100, 21, 1), fake(1000, 100, 21, 1),
			fake(1000, 100, 21, 1), fake(1000, 100, 21, 1), fake(1000, 100, 21, 1), fake(1000, 100, 21, 1),
			fake(1000, 100, 21, 1), fake(1000, 100, 21, 1), fake(2500, 100, 21, 1)),
			Decode{TokPerS: 92.5, Peak: 10, Threshold: 9, FromS: 1, ToS: 3}},
		// A server packing 4 tokens into each frame, a frame every 400 ms: 10 tok/s, measured
		// within a frame's worth — the separate finish frame makes each of the 41 frames worth
		// 160/41 tokens, and the first frame is left out.
		{"packed frames", point(fake(1000, 400, 160, 4)), Decode{TokPerS: (160 - 160/41.0) / 15.6, Peak: 1, Threshold: 1, FromS: 1, ToS: 16.6}},
		// No token at all: nothing to measure.
		{"no tokens", &Point{Start: t0, Calls: []agents.Result{{Sent: t0, End: at(10), Err: errors.New("503")}}, chunks: [][]time.Time{nil}}, Decode{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.Decode()
			assert.InDelta(t, tc.want.TokPerS, got.TokPerS, 1e-9, "Decode() = %+v; want %+v", got, tc.want)
			assert.Equal(t, tc.want.Peak, got.Peak, "peak")
			assert.Equal(t, tc.want.Threshold, got.Threshold, "threshold")
			assert.InDelta(t, tc.want.FromS, got.FromS, 1e-9, "from")
			assert.InDelta(t, tc.want.ToS, got.ToS, 1e-9, "to")
		})
	}
}

// TestProgressInterpolates checks the tokens a stream has received after its first at instants
// between frames.
func TestProgressInterpolates(t *testing.T) {
	r, frames := fakeStream(1000, 100, 5, 1) // tokens at 1.0, 1.1, 1.2, 1.3, 1.4 s
	g := newProgress(frames, r.FirstToken(), r)
	for _, tc := range []struct {
		ms   int
		want float64
	}{{999, 0}, {1000, 0}, {1050, 0.5}, {1200, 2}, {1390, 3.9}, {1400, 4}, {9000, 4}} {
		assert.InDelta(t, tc.want, g.at(at(tc.ms)), 1e-9, "at(%d ms)", tc.ms)
	}
}

// TestPerRequestAndWholeRates checks the two other rates on one stream of 11 tokens over 1 s
// of decoding, sent 1 s before its first token.
func TestPerRequestAndWholeRates(t *testing.T) {
	p := point(fake(1000, 100, 11, 1))
	assert.InDelta(t, 11.0, p.PerRequestTokPerS(), 1e-9, "11 tokens over 1 s of decode")
	assert.InDelta(t, 5.5, p.WholeTokPerS(), 1e-9, "11 tokens over the 2 s wall")
	assert.InDelta(t, 2.0, p.WallS(), 1e-9)
}
