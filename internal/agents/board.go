package agents

import (
	"slices"
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

	mu      sync.Mutex
	agents  []agentView
	streams map[string]*Stream
}

type agentView struct {
	state events.State
	since time.Time
}

// NewBoard returns a board for n agents, all Starting at start (simulated time).
func NewBoard(n int, start time.Time) *Board {
	b := &Board{agents: make([]agentView, n), streams: map[string]*Stream{}}
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

// Snapshot fills the harness part of a sample at simulated time now: agents per state, open
// streams with their silence, the chunks and tokens received so far, and the agents waiting in
// the pacer.
func (b *Board) Snapshot(now time.Time) (s events.Sample, waiters []events.Waiter) {
	s.Agents = map[events.State]int{}
	s.ChunksIn, s.TokensOut = b.chunksIn.Load(), b.tokens.Load()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, a := range b.agents {
		s.Agents[a.state]++
		if a.state == events.StatePacerWait {
			waiters = append(waiters, events.Waiter{Agent: i, WaitS: now.Sub(a.since).Seconds()})
		}
	}
	for _, st := range b.streams {
		last := st.Sent
		if lb := st.lastByte.Load(); lb != 0 {
			last = time.Unix(0, lb)
		}
		silence := now.Sub(last).Seconds()
		s.Streams = append(s.Streams, events.Stream{Request: st.ID, Agent: st.Agent, Permit: st.Permit,
			SentAgoS: now.Sub(st.Sent).Seconds(), SinceLastByteS: silence, Chunks: int(st.chunks.Load())})
		s.OldestSilenceS = max(s.OldestSilenceS, silence)
	}
	slices.SortFunc(s.Streams, func(x, y events.Stream) int { return x.Agent - y.Agent })
	s.InFlight = len(s.Streams)
	return s, waiters
}
