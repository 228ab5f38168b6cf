package results

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

// TestStreamFigures checks the stream figures a Builder derives: frames from every request,
// ended or open; tokens per chunk from the token frames of the successful requests that have
// a usage only; rates over simulated and wall seconds; and the latest sample's chunks_in when
// it counted more than the open streams the samples named.
func TestStreamFigures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		evs     []events.Event
		samples []events.Sample
		sim     float64 // simulated seconds
		wall    float64 // wall seconds (0: unknown)
		want    Stream
	}{{
		// Two ok requests of 10 and 30 tokens, at 1 and 2 tokens a token frame, four frames
		// each without a token; a failed one whose frames count, not its tokens.
		name: "ended",
		evs: []events.Event{
			{Kind: events.RequestSent, Request: "a"}, {Kind: events.Done, Request: "a", Chunks: 14, TokenChunks: 10, CompletionTokens: 10},
			{Kind: events.RequestSent, Request: "b"}, {Kind: events.Done, Request: "b", Chunks: 19, TokenChunks: 15, CompletionTokens: 30},
			{Kind: events.RequestSent, Request: "c"}, {Kind: events.Error, Request: "c", Chunks: 7},
		},
		sim: 10, wall: 0.5,
		want: Stream{Frames: 40, FramesPerSecond: 4, FramesPerWallSecond: 80, TokenFrames: 25, TokensPerChunk: 40.0 / 25},
	}, {
		// A successful request without usage says nothing of its tokens per chunk; an open
		// one's frames count as the latest sample naming it saw them; no wall time, no wall
		// rate.
		name: "open, no usage",
		evs: []events.Event{
			{Kind: events.RequestSent, Request: "a"}, {Kind: events.Done, Request: "a", Chunks: 14, TokenChunks: 10},
			{Kind: events.RequestSent, Request: "b"},
		},
		samples: []events.Sample{{Streams: []events.Stream{{Request: "b", Chunks: 6}}}},
		sim:     2,
		want:    Stream{Frames: 20, FramesPerSecond: 10},
	}, {
		// The samples named no open stream, but counted every chunk received.
		name: "chunks_in",
		evs: []events.Event{
			{Kind: events.RequestSent, Request: "a"}, {Kind: events.Done, Request: "a", Chunks: 5, TokenChunks: 1, CompletionTokens: 1},
			{Kind: events.RequestSent, Request: "b"},
		},
		samples: []events.Sample{{ChunksIn: 3}, {ChunksIn: 12}},
		sim:     4, wall: 4,
		want: Stream{Frames: 12, FramesPerSecond: 3, FramesPerWallSecond: 3, TokenFrames: 1, TokensPerChunk: 1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder()
			for _, e := range tc.evs {
				b.Event(e)
			}
			for _, s := range tc.samples {
				b.Sample(s)
			}
			r := Results{WallSeconds: tc.wall}
			b.Fill(&r, tc.sim)
			assert.Equal(t, tc.want, r.Stream, "Fill(%v simulated s) with wall_seconds %v", tc.sim, tc.wall)
		})
	}
}

// TestCoalescingAsked: a profile asks for coalescing with a limit above its stream interval.
func TestCoalescingAsked(t *testing.T) {
	for _, tc := range []struct {
		s    ServerStream
		want bool
	}{
		{ServerStream{StreamInterval: 1, CoalesceTokens: 1}, false},
		{ServerStream{StreamInterval: 4, CoalesceTokens: 4}, false},
		{ServerStream{StreamInterval: 1, CoalesceTokens: 8}, true},
	} {
		assert.Equal(t, tc.want, tc.s.CoalescingAsked(), "%+v.CoalescingAsked()", tc.s)
	}
}
