package record

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestAssignSiblingSentBefore checks that a request sent before a lane's last request —
// its concurrent sibling, its body read only after that request ended — does not continue or
// retry it: it would come after it in seq though sent before. It starts a lane of its own; a
// request sent after it, even before the proxy saw it end, is its retry.
func TestAssignSiblingSentBefore(t *testing.T) {
	s := newSessions()
	k1 := key{1}
	a := s.assign("", []key{k1}, toolResults{}, 2)
	s.release(a.lane, ended{seq: a.seq, sentS: 2, endS: 5, key: k1}) // sent at 2, failed at 5
	b := s.assign("", []key{k1}, toolResults{}, 1.5)                 // sent at 1.5, placed after
	assert.False(t, b.retry, "sent before it: not its retry")
	assert.NotSame(t, a.lane, b.lane)
	c := s.assign("", []key{k1}, toolResults{}, 4.9)
	assert.True(t, c.retry, "sent after it, before its end was seen: the retry")
	assert.Same(t, a.lane, c.lane)
}

// TestProcViewRetry numbers a process's rounds across its lanes and makes a re-sent failed
// request the same round's next attempt, after a retry event with the silence before it; the
// failed attempt's round_done is dropped, the round going on.
func TestProcViewRetry(t *testing.T) {
	p := newProcView(func(s string) (int, bool) { return 3, s == "3" })
	first := Seen{ID: 1, Session: "3", SentS: 0}
	assert.Empty(t, p.sent(first))
	assert.Equal(t, "a3-r1-0", p.event(events.RequestSent, first, 0).Request)
	failedDone := events.Event{TS: 30, Kind: events.RoundDone, Agent: 3, Round: 1, Outcome: events.RoundFailed}
	assert.Empty(t, p.ended(first, events.Event{TS: 30, Kind: events.Cancelled, Class: events.ClassCancelled, SinceLastByteS: 29}, failedDone),
		"a failed request's round_done waits for what follows")
	again := Seen{ID: 2, Session: "3", SentS: 30.5, Retry: true}
	evs := p.sent(again)
	require.Len(t, evs, 1, "the retry event, and no round_done")
	assert.Equal(t, events.Event{TS: 30.5, Kind: events.Retry, Agent: 3, Round: 1, Attempt: 1, Request: "a3-r1-1", BackoffS: 0.5,
		SinceLastByteS: 29, Class: events.ClassCancelled, Message: evs[0].Message}, evs[0])
	assert.Equal(t, "a3-r1-1", p.event(events.Headers, again, 31).Request)
	okDone := events.Event{TS: 32, Kind: events.RoundDone, Agent: 3, Round: 1, Outcome: events.RoundOK}
	assert.Equal(t, []events.Event{okDone}, p.ended(again, events.Event{TS: 32, Kind: events.Done}, okDone), "the retried round ends ok")
	other := Seen{ID: 3, Session: "3~2", SentS: 33}
	p.sent(other)
	assert.Equal(t, "a3-r2-0", p.event(events.RequestSent, other, 33).Request, "a second lane of the process numbers on")
}

// TestProcViewFailedRounds checks when a failed request's round_done is written: before the
// agent's next request that is not its retry, at its process's exit, and at once after it.
func TestProcViewFailedRounds(t *testing.T) {
	p := newProcView(func(string) (int, bool) { return 1, true })
	done := func(round int) events.Event {
		return events.Event{Kind: events.RoundDone, Agent: 1, Round: round, Outcome: events.RoundFailed}
	}
	failed := events.Event{Kind: events.Error, Class: events.ClassHTTPStatus}
	a := Seen{ID: 1, Session: "1"}
	p.sent(a)
	assert.Empty(t, p.ended(a, failed, done(1)))
	b := Seen{ID: 2, Session: "1"} // new messages: not a retry
	assert.Equal(t, []events.Event{done(1)}, p.sent(b), "the next request shows the failed round over")
	assert.Empty(t, p.ended(b, failed, done(2)))
	assert.Equal(t, []events.Event{done(2)}, p.exit(1), "the process's exit too")
	c := Seen{ID: 3, Session: "1"}
	p.sent(c)
	assert.Equal(t, []events.Event{done(3)}, p.ended(c, failed, done(3)), "after the exit, at once")
}
