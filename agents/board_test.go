package agents

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
)

// boardWith returns a board of n agents, each with one open stream sent at t0; the first
// silent streams received their last byte at t0, the others at t0+silentFor (moving at
// now = t0+silentFor). The last waiting agents wait in the pacer since t0, agent i from
// t0+i ms.
func boardWith(t0 time.Time, n, silent, waiting int, silentFor time.Duration) *Board {
	b := NewBoard(n+waiting, t0)
	for i := 0; i < n; i++ {
		b.set(i, events.StateRequesting, t0)
		s := b.open(fmt.Sprintf("a%d-r0-0", i), i, uint64(i+1), t0)
		if i < silent {
			s.Byte(t0)
		} else {
			s.Chunk(t0.Add(silentFor))
		}
	}
	for i := n; i < n+waiting; i++ {
		b.set(i, events.StatePacerWait, t0.Add(time.Duration(i)*time.Millisecond))
	}
	return b
}

// TestSnapshotNamesLongestSilences: a sample counts every open stream and names the longest
// silences — at least events.ListedStreams, every silent one up to events.MaxListedStreams —
// and the longest pacer waits.
func TestSnapshotNamesLongestSilences(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0.Add(30 * time.Second)
	for _, c := range []struct {
		name           string
		open, silent   int
		listed         int
		unlistedSilent bool
	}{
		{"few open", 5, 1, 5, false},
		{"few silent", 100, 3, events.ListedStreams, false},
		{"many silent", 100, 20, 20, false},
		{"more silent than named", 100, 70, events.MaxListedStreams, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := boardWith(t0, c.open, c.silent, 12, 30*time.Second)
			s, w := b.Snapshot(now, 20*time.Second)
			require.NotNil(t, s.Open)
			assert.Equal(t, c.open, s.InFlight)
			assert.Len(t, s.Streams, c.listed)
			assert.Equal(t, c.silent, s.Open.Silent, "silent ≥ stall_after")
			assert.Equal(t, c.open-c.silent, s.Open.Moving, "a chunk within the last second")
			assert.Equal(t, c.open, s.Open.WithBytes)
			assert.Equal(t, int64(c.open-c.silent), s.Open.Chunks)
			assert.Equal(t, 30.0, s.OldestSilenceS)
			assert.Equal(t, 0.0, s.Open.LastByteAgoS)
			assert.Equal(t, 30.0, s.Streams[0].SinceLastByteS, "longest silence first")
			if c.unlistedSilent {
				assert.Equal(t, 30.0, s.Open.UnlistedMaxSilenceS)
			} else {
				assert.Equal(t, 0.0, s.Open.UnlistedMaxSilenceS, "the unnamed streams are moving")
			}
			assert.Equal(t, 12, w.N)
			require.Len(t, w.Longest, events.ListedWaiters)
			assert.Equal(t, c.open, w.Longest[0].Agent, "the longest wait first")
			assert.InDelta(t, 30-float64(c.open)/1000, w.Longest[0].WaitS, 1e-9)
			open, silent := b.Permit(1)
			assert.True(t, open)
			assert.Equal(t, c.silent > 0, silent, "permit 1 is agent 0's, silent when any is")
			open, _ = b.Permit(1 << 40)
			assert.False(t, open)
		})
	}
}

// BenchmarkSample measures one sample of 10,000 agents, each with an open stream and 1,000
// more waiting in the pacer: the board snapshot and its JSON line.
func BenchmarkSample(b *testing.B) {
	t0 := time.Unix(1000, 0)
	board := boardWith(t0, 10_000, 100, 1_000, 30*time.Second)
	var line countingWriter
	enc := json.NewEncoder(&line)
	now := t0.Add(30 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		s, w := board.Snapshot(now, 20*time.Second)
		s.Pacer = &events.PacerSample{Waiting: w.N, Waiters: w.Longest, WaitP50S: w.P50S, WaitP90S: w.P90S}
		if err := enc.Encode(s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(line)/float64(b.N), "line-bytes/op")
}

// countingWriter counts the bytes written to it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// TestSnapshotByteAfterInstant checks that a byte stamped after the snapshot's instant (stream
// readers stamp without the board's lock) counts as a silence of 0, never a negative one, and
// that a stream opened after it was sent 0 s ago.
func TestSnapshotByteAfterInstant(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := NewBoard(1, t0)
	s := b.open("a0-r1-0", 0, 1, t0.Add(2*time.Millisecond))
	s.Chunk(t0.Add(3 * time.Millisecond))
	snap, _ := b.Snapshot(t0, 20*time.Second)
	require.NotNil(t, snap.Open)
	assert.Equal(t, 0.0, snap.Open.LastByteAgoS)
	assert.Equal(t, 0.0, snap.OldestSilenceS)
	require.Len(t, snap.Streams, 1)
	assert.Equal(t, 0.0, snap.Streams[0].SinceLastByteS)
	assert.Equal(t, 0.0, snap.Streams[0].SentAgoS)
}
