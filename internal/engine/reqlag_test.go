package engine

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// TestRequestLagIsEachRequests: the engine is late — a step overhead of 1 s, a request
// admitted 5 s after its client sent it — but a request long-context-wedge wedged gets no
// token from the model, so it is not behind it: its own lag reads 0 while a moving request's
// reads its tokens' lateness and Behind the engine's largest.
func TestRequestLagIsEachRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		faults, err := ParseFaults([]string{"long-context-wedge"}, []string{"threshold_tokens=2000", "probability=1"}, 1)
		require.NoError(t, err)
		e := startLateEngine(t, clk, faults)
		sent := clk.Now()
		require.NoError(t, clk.Sleep(context.Background(), 5*time.Second))
		wedged, err := e.Submit(Job{PromptTokens: 3000, MaxTokens: 50, IgnoreEOS: true, Key: 1, Received: sent})
		require.NoError(t, err)
		moving, err := e.Submit(Job{PromptTokens: 100, MaxTokens: 5, IgnoreEOS: true, Key: 2})
		require.NoError(t, err)
		e.Track("a0-r1-0", wedged)
		e.Track("a1-r1-0", moving)

		_, ok := e.RequestLag("a2-r1-0")
		assert.False(t, ok, "a request not tracked")
		readAll(t, e, moving)
		synctest.Wait()
		require.Equal(t, phaseWedged, phase(wedged.phase.Load()))
		lag, ok := e.RequestLag("a0-r1-0")
		require.True(t, ok)
		assert.Zero(t, lag, "wedged: the model gives it no token")
		assert.Positive(t, e.Lag().Stats().Max, "the engine is late")
		lag, ok = e.RequestLag("a1-r1-0")
		require.True(t, ok)
		assert.Positive(t, lag, "the moving request's tokens came late")

		e.Untrack("a1-r1-0")
		after, ok := e.RequestLag("a1-r1-0")
		assert.True(t, ok, "read once more as its stream ends")
		assert.Equal(t, lag, after)
		e.Cancel(wedged)
	})
}

// Ended requests' lag is kept for the endedKept most recent only.
func TestRequestLagIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := LookupProfile("vllm-llama3-8b-h100")
		require.NoError(t, err)
		e, err := NewEngine(clock.Real(), prof, nil)
		require.NoError(t, err)
		g := &Gen{}
		for i := range endedKept + 1 {
			id := fmt.Sprintf("a0-r%d-0", i)
			e.Track(id, g)
			e.Untrack(id)
		}
		_, ok := e.RequestLag("a0-r0-0")
		assert.False(t, ok, "the oldest is forgotten")
		_, ok = e.RequestLag("a0-r1-0")
		assert.True(t, ok)
		assert.Len(t, e.reqLags.ended, endedKept)
		assert.Empty(t, e.reqLags.open)
		e.Track("", g)
		assert.Empty(t, e.reqLags.open, "no id, nothing tracked")
	})
}

// A stream stall-stream pauses is not behind its model while the pause lasts, however late
// the engine's steps end (a step overhead of 1 s): its lag reads 0 until the resume is due,
// though its tokens before the pause came late.
func TestRequestLagOfAPausedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		faults, err := ParseFaults([]string{"stall-stream"}, []string{"fraction=1", "duration=60s"}, 1)
		require.NoError(t, err)
		e := startLateEngine(t, clk, faults)
		g, err := e.Submit(Job{PromptTokens: 100, MaxTokens: 40, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		e.Track("a0-r1-0", g)
		ctx := context.Background()
		for phase(g.phase.Load()) != phasePaused {
			if n, _, err := g.Next(ctx, 1); err == nil && n > 0 {
				e.Delivered(g)
			}
		}
		before, _ := e.RequestLag("a0-r1-0")
		require.NoError(t, clk.Sleep(ctx, 30*time.Second))
		synctest.Wait()
		require.Equal(t, phasePaused, phase(g.phase.Load()))
		lag, ok := e.RequestLag("a0-r1-0")
		require.True(t, ok)
		assert.Zero(t, lag, "paused: the model gives it no token before the resume")
		assert.Positive(t, e.Lag().Stats().Max, "its tokens before the pause came late (%s when it paused)", before)
		e.Cancel(g)
	})
}
