package record

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

// TestAssignRetry marks a request that re-sends a failed request's messages as its retry, and
// neither a continuation of a reply nor a re-send after a success.
func TestAssignRetry(t *testing.T) {
	s := newSessions()
	k1, k2 := key{1}, key{2}
	a := s.assign("3", []key{k1}, toolResults{}, 0)
	s.release(a.lane, ended{seq: a.seq, endS: 1, key: k1}) // failed: its messages alone
	b := s.assign("3", []key{k1}, toolResults{}, 2)
	assert.True(t, b.retry, "the same messages after a failure")
	s.release(b.lane, ended{seq: b.seq, endS: 3, ok: true, key: k2}) // ok: messages and reply
	c := s.assign("3", []key{k1, k2}, toolResults{}, 4)
	assert.False(t, c.retry, "a continuation of a reply")
	s.release(c.lane, ended{seq: c.seq, endS: 5, ok: true, key: key{3}})
}

// TestProcViewRetry numbers a process's rounds across its lanes and makes a re-sent failed
// request the same round's next attempt, after a retry event with the silence before it.
func TestProcViewRetry(t *testing.T) {
	p := newProcView(func(s string) (int, bool) { return 3, s == "3" })
	first := Seen{ID: 1, Session: "3", SentS: 0}
	_, isRetry := p.sent(first)
	assert.False(t, isRetry)
	assert.Equal(t, "a3-r1-0", p.event(events.RequestSent, first, 0).Request)
	p.ended(first, events.Event{TS: 30, Kind: events.Cancelled, Class: events.ClassCancelled, SinceLastByteS: 29})
	again := Seen{ID: 2, Session: "3", SentS: 30.5, Retry: true}
	r, isRetry := p.sent(again)
	assert.True(t, isRetry)
	assert.Equal(t, events.Event{TS: 30.5, Kind: events.Retry, Agent: 3, Round: 1, Attempt: 1, Request: "a3-r1-1", BackoffS: 0.5,
		SinceLastByteS: 29, Class: events.ClassCancelled, Message: r.Message}, r)
	assert.Equal(t, "a3-r1-1", p.event(events.Headers, again, 31).Request)
	other := Seen{ID: 3, Session: "3~2", SentS: 31}
	p.sent(other)
	assert.Equal(t, "a3-r2-0", p.event(events.RequestSent, other, 31).Request, "a second lane of the process numbers on")
}
