package agents

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// TestCalibrationLearnsTokensPerWord checks the estimate moves to what the server counts.
func TestCalibrationLearnsTokensPerWord(t *testing.T) {
	c := NewCalibration()
	assert.Equal(t, 1.0, c.TokensPerWord(), "starts at one token per word")
	// 1000 words in 3 messages counted as 1515 tokens: 1.5 tokens per word after framing.
	c.Observe(1000, 3, 1000*3/2+3*messageFraming+promptFraming)
	assert.InDelta(t, 1.5, c.TokensPerWord(), 1e-9, "the first observation is taken whole")
	c.Observe(1000, 3, 1000+3*messageFraming+promptFraming)
	assert.InDelta(t, 1.4, c.TokensPerWord(), 1e-9, "later ones move it by a fifth of the difference")
	c.Observe(0, 1, 100)
	assert.InDelta(t, 1.4, c.TokensPerWord(), 1e-9, "nothing to learn from no words")
	assert.Equal(t, 1400+2*messageFraming+promptFraming, c.Tokens(1000, 2))
}

// TestTerminalEventByOutcome checks that each way a request ends gives its one terminal event
// kind with the fields diagnosis reads.
func TestTerminalEventByOutcome(t *testing.T) {
	sent := time.Unix(1000, 0)
	for _, tc := range []struct {
		name  string
		r     Result
		kind  events.Kind
		class events.Class
	}{
		// A complete stream.
		{"done", Result{Sent: sent, Last: sent.Add(9 * time.Second), End: sent.Add(10 * time.Second),
			FinishReason: "stop", Usage: Usage{Completion: 100, Reasoning: 60}}, events.Done, ""},
		// The idle timeout cut a silent stream.
		{"idle timeout", Result{Sent: sent, Last: sent.Add(time.Second), End: sent.Add(61 * time.Second),
			Err: ErrIdleTimeout, Class: events.ClassTimeoutIdle}, events.Timeout, "timeout_idle"},
		// The run's stop cancelled it.
		{"cancelled", Result{Sent: sent, End: sent.Add(5 * time.Second), Err: errors.New("call cancelled"),
			Class: events.ClassCancelled}, events.Cancelled, "cancelled"},
		// A 503 before the stream.
		{"http status", Result{Sent: sent, End: sent.Add(time.Second), Err: errors.New("503"), Class: events.ClassHTTPStatus,
			Status: 503}, events.Error, "http_status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e events.Event
			terminalEvent(&e, &tc.r, 2, "a1-r2-0", 0)
			assert.Equal(t, tc.kind, e.Kind)
			assert.True(t, e.Kind.Terminal())
			assert.Equal(t, tc.class, e.Class)
			assert.Equal(t, "a1-r2-0", e.Request)
			assert.InDelta(t, tc.r.End.Sub(tc.r.Sent).Seconds(), e.LatencyS, 1e-9, "latency_s")
			if tc.r.Last.IsZero() {
				assert.InDelta(t, e.LatencyS, e.SinceLastByteS, 1e-9, "no byte: silent since sent")
			} else {
				assert.InDelta(t, tc.r.End.Sub(tc.r.Last).Seconds(), e.SinceLastByteS, 1e-9)
			}
			if tc.kind == events.Done {
				assert.Equal(t, 40, e.ContentTokens)
			}
		})
	}
}

// TestCountWords checks countWords against strings.Fields.
func TestCountWords(t *testing.T) {
	for _, s := range []string{"", " ", "one", " one  two\tthree\n", "a\u00a0b\u2003c", "ünï cødé  ", "x\x85y"} {
		assert.Equal(t, len(strings.Fields(s)), countWords(s), "%q", s)
	}
}

// TestCalibrationOnAClockIsOrderFree: on a clock, observations count from the next instant
// on, in the order of their values, so two agents that observe at one instant leave the same
// estimate whichever observes first, and every read at that instant sees the one before.
func TestCalibrationOnAClockIsOrderFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		tokens := func(perWord float64) int { return int(1000*perWord) + 3*messageFraming + promptFraming }
		var got [2]float64
		for i, order := range [2][2]float64{{1.5, 1.0}, {1.0, 1.5}} {
			c := NewCalibrationOn(clk)
			c.Observe(1000, 3, tokens(order[0]))
			assert.Equal(t, 1.0, c.TokensPerWord(), "an observation does not count at its own instant")
			c.Observe(1000, 3, tokens(order[1]))
			time.Sleep(time.Millisecond)
			got[i] = c.TokensPerWord()
		}
		assert.InDelta(t, 1.1, got[0], 1e-9, "1.0 first, taken whole, then a fifth of the way to 1.5")
		assert.Equal(t, got[0], got[1], "the order of one instant's observations does not matter")
	})
}
