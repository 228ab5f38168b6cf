package events_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
)

// TestBound: a sample listing 100 open streams, 12 of them silent ≥ stall_after, keeps the
// 12 silent ones, longest first, and counts all 100.
func TestBound(t *testing.T) {
	s := events.Sample{TS: 300, InFlight: 100}
	for i := range 100 {
		st := events.Stream{Request: fmt.Sprintf("a%d-r1-0", i), Agent: i, SentAgoS: 200, SinceLastByteS: 0.5, Chunks: 10}
		if i%10 == 3 || i == 4 || i == 5 {
			st.SinceLastByteS, st.Chunks = 100+float64(i), 1 // silent ≥ 20 s
		}
		s.Streams = append(s.Streams, st)
	}
	s.Bound(20)
	require.NotNil(t, s.Open)
	assert.Equal(t, events.OpenStreams{StallAfterS: 20, Silent: 12, Moving: 88, WithBytes: 100, Chunks: 88*10 + 12,
		LastByteAgoS: 0.5, SilenceP50S: 0.5, SilenceP90S: 104, UnlistedMaxSilenceS: 0.5, NotSilentMaxS: 0.5}, *s.Open)
	require.Len(t, s.Streams, 12)
	assert.Equal(t, 93, s.Streams[0].Agent, "longest silence first")
	assert.Equal(t, 3, s.Streams[11].Agent)
	assert.Equal(t, 12, s.SilentStreams(20))
	assert.Equal(t, int64(892), s.OpenChunks())

	before := *s.Open
	s.Bound(20)
	assert.Equal(t, before, *s.Open, "a bounded sample stays as it is")
	assert.Len(t, s.Streams, 12)

	few := events.Sample{Streams: []events.Stream{{Request: "a0-r1-0", SentAgoS: 3, SinceLastByteS: 3}}}
	few.Bound(20)
	assert.Len(t, few.Streams, 1, "up to events.ListedStreams are always named")
	assert.Equal(t, 0, few.Open.WithBytes, "nothing arrived since it was sent")
}
