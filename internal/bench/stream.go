package bench

import (
	"context"
	"sync"
	"time"

	"github.com/agentsim/agentsim/internal/agents"
)

// stream is one request of a test: its call's observer and the client's live view of it,
// shared by the goroutine running the call and the sampler.
type stream struct {
	mu     sync.Mutex
	sent   time.Time   // simulated time the request was handed to the client
	last   time.Time   // last byte: headers or data frame; zero before any
	chunks []time.Time // arrival of every data frame, [DONE] included
	done   bool
	res    agents.Result
}

var _ agents.Observer = (*stream)(nil)

// run sends req and waits for its end; sent is when the call began.
func (s *stream) run(ctx context.Context, c *agents.Client, req agents.Request, sent time.Time) {
	s.mu.Lock()
	s.sent = sent
	s.mu.Unlock()
	res := c.Call(ctx, req, s)
	s.mu.Lock()
	s.res, s.done = res, true
	s.mu.Unlock()
}

// Headers records the response headers as a byte.
func (s *stream) Headers(t time.Time) {
	s.mu.Lock()
	s.last = t
	s.mu.Unlock()
}

// FirstReasoning is not needed: the call's Result has it.
func (s *stream) FirstReasoning(time.Time) {}

// FirstContent is not needed: the call's Result has it.
func (s *stream) FirstContent(time.Time) {}

// Chunk records a data frame's arrival.
func (s *stream) Chunk(t time.Time) {
	s.mu.Lock()
	s.last = t
	s.chunks = append(s.chunks, t)
	s.mu.Unlock()
}

// view is the client's view of a test's streams at one instant.
type view struct {
	inFlight       int
	oldestSilenceS float64 // longest time an open request has gone without a byte, s
	tokensOut      int64   // output tokens of completed requests (usage)
	chunksIn       int64   // data frames received by every request
}

// look reads the streams at now.
func look(streams []*stream, now time.Time) view {
	var v view
	for _, s := range streams {
		s.mu.Lock()
		v.chunksIn += int64(len(s.chunks))
		switch {
		case s.done:
			v.tokensOut += int64(s.res.Usage.Completion)
		case !s.sent.IsZero():
			v.inFlight++
			since := s.sent
			if s.last.After(since) {
				since = s.last
			}
			v.oldestSilenceS = max(v.oldestSilenceS, now.Sub(since).Seconds())
		}
		s.mu.Unlock()
	}
	return v
}
