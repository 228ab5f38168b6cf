package agents

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/events"
)

// Board is the live view of every agent and open stream, which the harness samples into
// samples.jsonl. Agents update it; it is safe for concurrent use. Per-chunk updates are
// atomic and lock-free.
type Board struct {
	chunksIn atomic.Int64
	tokens   atomic.Int64
	// acquires, releases, opens and closes count the agents' changes of the pacer and of
	// their streams (see Recorded).
	acquires, releases, opens, closes changes

	mu      sync.Mutex
	agents  []agentView
	streams map[string]*Stream

	// Buffers of Snapshot, reused from one sample to the next, and the permits of the open
	// streams at the last snapshot (true when the stream was silent).
	waits    []events.Waiter
	silences []silenceOf
	sorted   []float64
	permits  map[uint64]bool
	// unnamed lists the streams silent ≥ stall_after at the last snapshot that it did not
	// name (events.NamedStreams).
	unnamed []Sent
}

// Sent is an open request, its agent and when it was sent (simulated time).
type Sent struct {
	ID    string
	Agent int
	Sent  time.Time
}

type agentView struct {
	state events.State
	since time.Time
}

// NewBoard returns a board for n agents, all Starting at start (simulated time).
func NewBoard(n int, start time.Time) *Board {
	b := &Board{agents: make([]agentView, n), streams: map[string]*Stream{}, permits: map[uint64]bool{}}
	for i := range b.agents {
		b.agents[i] = agentView{state: events.StateStarting, since: start}
	}
	return b
}

// Stream is one open request on the board.
type Stream struct {
	ID     string
	Agent  int
	Permit uint64
	Sent   time.Time

	lastByte atomic.Int64 // simulated UnixNano of the last byte; 0 before any
	chunks   atomic.Int64
	board    *Board
}

// Byte records that bytes arrived on the stream at simulated time t.
func (s *Stream) Byte(t time.Time) { s.lastByte.Store(t.UnixNano()) }

// Chunk records one stream chunk at simulated time t.
func (s *Stream) Chunk(t time.Time) {
	s.lastByte.Store(t.UnixNano())
	s.chunks.Add(1)
	s.board.chunksIn.Add(1)
}

// set moves agent to state at time t.
func (b *Board) set(agent int, s events.State, t time.Time) {
	b.mu.Lock()
	b.agents[agent] = agentView{state: s, since: t}
	b.mu.Unlock()
}

// open adds a stream for a request just sent.
func (b *Board) open(id string, agent int, permit uint64, sent time.Time) *Stream {
	s := &Stream{ID: id, Agent: agent, Permit: permit, Sent: sent, board: b}
	b.mu.Lock()
	b.streams[id] = s
	b.mu.Unlock()
	return s
}

// close removes a finished stream and counts its output tokens.
func (b *Board) close(s *Stream, outputTokens int) {
	b.tokens.Add(int64(outputTokens))
	b.mu.Lock()
	delete(b.streams, s.ID)
	b.mu.Unlock()
}

// Waits is the agents waiting in the pacer at a sampling instant.
type Waits struct {
	// Longest lists the events.ListedWaiters longest waits, longest first.
	Longest []events.Waiter
	// N is how many agents wait; P50S and P90S are quantiles of their waits, in seconds.
	N          int
	P50S, P90S float64
}

// silenceOf is one open stream's silence at a snapshot.
type silenceOf struct {
	st      *Stream
	silence float64 // seconds
	chunks  int
}

// Snapshot fills the harness part of a sample at simulated time now: agents per state, the
// open streams' aggregates (stallAfter is the threshold of a silent stream) with the longest
// silences named, the chunks and tokens received so far, and the agents waiting in the pacer.
// It reuses the board's buffers: one snapshot runs at a time.
func (b *Board) Snapshot(now time.Time, stallAfter time.Duration) (s events.Sample, w Waits) {
	s.Agents = map[events.State]int{}
	s.ChunksIn, s.TokensOut = b.chunksIn.Load(), b.tokens.Load()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waits = b.waits[:0]
	for i, a := range b.agents {
		s.Agents[a.state]++
		if a.state == events.StatePacerWait {
			b.waits = append(b.waits, events.Waiter{Agent: i, WaitS: now.Sub(a.since).Seconds()})
		}
	}
	w.N = len(b.waits)
	if w.N > 0 {
		slices.SortFunc(b.waits, func(x, y events.Waiter) int {
			return cmp.Or(cmp.Compare(y.WaitS, x.WaitS), x.Agent-y.Agent)
		})
		w.P50S, w.P90S = b.waits[quantileIndex(w.N, 0.5)].WaitS, b.waits[quantileIndex(w.N, 0.9)].WaitS
		w.Longest = slices.Clone(b.waits[:min(w.N, events.ListedWaiters)])
	}
	s.Open = b.streamSnapshot(now, stallAfter.Seconds(), &s)
	return s, w
}

// quantileIndex is the index, in a slice of n values sorted in decreasing order, of the
// q-quantile (nearest rank).
func quantileIndex(n int, q float64) int {
	rank := int(math.Ceil(q * float64(n))) // 1-based, in increasing order
	return n - max(rank, 1)
}

// streamSnapshot fills the open streams' part of s and returns their aggregates; b.mu is held.
func (b *Board) streamSnapshot(now time.Time, stallS float64, s *events.Sample) *events.OpenStreams {
	o := &events.OpenStreams{StallAfterS: stallS}
	b.silences = b.silences[:0]
	b.unnamed = b.unnamed[:0]
	clear(b.permits)
	lastByte := int64(0)
	for _, st := range b.streams {
		last := st.Sent
		lb := st.lastByte.Load()
		if lb != 0 {
			last = time.Unix(0, lb)
			o.WithBytes++
			lastByte = max(lastByte, lb)
		}
		// A byte that arrived after the snapshot's instant (stream readers stamp bytes without
		// the board's lock) is a silence of 0, not a negative one.
		x := silenceOf{st: st, silence: max(0, now.Sub(last).Seconds()), chunks: int(st.chunks.Load())}
		o.Chunks += int64(x.chunks)
		silent := x.silence >= stallS
		if silent {
			o.Silent++
			b.unnamed = append(b.unnamed, Sent{ID: st.ID, Agent: st.Agent, Sent: st.Sent})
		}
		if x.chunks > 0 && x.silence < events.MovingWithinS {
			o.Moving++
		}
		if st.Permit != 0 {
			b.permits[st.Permit] = b.permits[st.Permit] || silent
		}
		b.silences = append(b.silences, x)
	}
	n := len(b.silences)
	s.InFlight = n
	if lastByte != 0 {
		o.LastByteAgoS = max(0, now.Sub(time.Unix(0, lastByte)).Seconds())
	}
	if n == 0 {
		return o
	}
	// Quantiles from the silences alone; then only the streams at or above the listed-th
	// longest silence are sorted to name them.
	b.sorted = b.sorted[:0]
	for _, x := range b.silences {
		b.sorted = append(b.sorted, x.silence)
	}
	slices.Sort(b.sorted)
	slices.Reverse(b.sorted)
	s.OldestSilenceS = b.sorted[0]
	o.SilenceP50S, o.SilenceP90S = b.sorted[quantileIndex(n, 0.5)], b.sorted[quantileIndex(n, 0.9)]
	listed := events.NamedStreams(n, o.Silent)
	if listed < n {
		o.UnlistedMaxSilenceS = b.sorted[listed]
	}
	if o.Silent < n {
		o.NotSilentMaxS = b.sorted[o.Silent]
	}
	top := b.silences[:0] // filtered in place: b.silences is not read again
	for _, x := range b.silences {
		if x.silence >= b.sorted[listed-1] {
			top = append(top, x)
		}
	}
	slices.SortFunc(top, func(x, y silenceOf) int {
		return cmp.Or(cmp.Compare(y.silence, x.silence), x.st.Agent-y.st.Agent, strings.Compare(x.st.ID, y.st.ID))
	})
	s.Streams = make([]events.Stream, listed)
	for i, x := range top[:listed] {
		s.Streams[i] = events.Stream{Request: x.st.ID, Agent: x.st.Agent, Permit: x.st.Permit,
			SentAgoS: max(0, now.Sub(x.st.Sent).Seconds()), SinceLastByteS: x.silence, Chunks: x.chunks}
	}
	if len(b.unnamed) > 0 {
		named := make(map[string]bool, listed)
		for _, st := range s.Streams {
			named[st.Request] = true
		}
		b.unnamed = slices.DeleteFunc(b.unnamed, func(u Sent) bool { return named[u.ID] })
	}
	return o
}

// UnnamedSilent returns the streams silent ≥ stall_after at the last Snapshot that it did not
// name: a copy, in no particular order.
func (b *Board) UnnamedSilent() []Sent {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.unnamed)
}

// States returns each agent's state now, by agent: a copy.
func (b *Board) States() []events.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	states := make([]events.State, len(b.agents))
	for i, a := range b.agents {
		states[i] = a.state
	}
	return states
}

// Open returns every open stream now: a copy, in no particular order.
func (b *Board) Open() []Sent {
	b.mu.Lock()
	defer b.mu.Unlock()
	open := make([]Sent, 0, len(b.streams))
	for _, st := range b.streams {
		open = append(open, Sent{ID: st.ID, Agent: st.Agent, Sent: st.Sent})
	}
	return open
}

// Permit reports whether an open stream used the pacer permit id at the last snapshot, and
// whether that stream was silent for stall_after or more.
func (b *Board) Permit(id uint64) (open, silent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	silent, open = b.permits[id]
	return open, silent
}
