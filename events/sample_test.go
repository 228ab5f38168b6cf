package events_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestBoundNamesTheLongestSilences: the streams a sample names are the first of all its open
// streams sorted longest silence first (then by agent and request), whatever their order and
// however many tie.
func TestBoundNamesTheLongestSilences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 64, 65, 100, 3000} {
		for range 5 {
			s := events.Sample{InFlight: n, SimLagPerRequest: true}
			for i := range n {
				st := events.Stream{Request: fmt.Sprintf("a%d-r%d-0", rng.IntN(40), i), Agent: rng.IntN(40),
					SentAgoS: 500, SinceLastByteS: float64(rng.IntN(60)), Chunks: 1, SimLagS: float64(1 + rng.IntN(1000))}
				s.Streams = append(s.Streams, st)
			}
			want := slices.Clone(s.Streams)
			slices.SortFunc(want, func(x, y events.Stream) int {
				return cmp.Or(cmp.Compare(y.SinceLastByteS, x.SinceLastByteS), x.Agent-y.Agent, strings.Compare(x.Request, y.Request))
			})
			silent := 0
			for _, st := range want {
				if st.SinceLastByteS >= 20 {
					silent++
				}
			}
			s.Bound(20)
			named := events.NamedStreams(n, silent)
			require.Equal(t, want[:named], s.Streams, "%d streams", n)
			least := 0.0 // the least lag of the silent streams not named
			for _, st := range want[named:] {
				if st.SinceLastByteS >= 20 && (least == 0 || st.SimLagS < least) {
					least = st.SimLagS
				}
			}
			assert.Equal(t, least, s.Open.UnlistedSilentSimLagS, "%d streams", n)
		}
	}
}

// BenchmarkBound bounds a sample of 5,000 open streams, 10 of them silent: what a proxy's
// watch does every sample interval, a thousand times a second at --speedup 1000.
func BenchmarkBound(b *testing.B) {
	const n = 5000
	rng := rand.New(rand.NewPCG(1, 2))
	streams := make([]events.Stream, n)
	for i := range streams {
		streams[i] = events.Stream{Request: fmt.Sprintf("a%d-r1-0", i), Agent: i, SentAgoS: 500, SinceLastByteS: rng.Float64(), Chunks: 10}
	}
	for i := range 10 {
		streams[rng.IntN(n)].SinceLastByteS = 100 + float64(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		s := events.Sample{InFlight: n, Streams: slices.Clone(streams)}
		s.Bound(20)
	}
}
