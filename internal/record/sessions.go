package record

import (
	"crypto/sha256"
	"fmt"
	"sync"
)

// key identifies a conversation prefix: a hash of its messages in order (role, text, tool
// calls). Two requests whose first k messages are equal have equal k-th keys.
type key [sha256.Size]byte

// lane is one closed-loop session of the trace: at most one request in flight, seqs in send
// order. A harness that names a session (X-Session-ID) and sends two requests of it at once
// gets a second lane, "name~2", since a trace's session never overlaps itself.
type lane struct {
	name  string
	group string // the name the harness gave, or "" for a session inferred from the conversation
	next  int    // the seq of the lane's next request
	busy  bool   // a request of the lane is in flight
	last  *ended // the lane's latest ended request; nil before the first ends
}

// ended is what a later request needs of an ended one to continue its session.
type ended struct {
	seq   int
	sentS float64 // when it arrived, seconds since the recording began
	endS  float64 // when its last byte arrived
	// tokens is its whole conversation, prompt and reply, in tokens; ok says whether it
	// ended with a reply (a failed request's retry continues the session without extends).
	tokens int
	ok     bool
	key    key // its messages and reply (ok), or its messages alone (failed)
	// calls is how many tool calls its reply made (ok only), callIDs their ids when the
	// server gave them, msgs its conversation's messages, the reply included.
	calls   int
	callIDs []string
	msgs    int
}

// assignment places one request in the trace: its lane and seq, the earlier request it
// extends, and its think time.
type assignment struct {
	lane    *lane
	seq     int
	extends *int    // the seq it extends, nil when none
	baseTok int     // with extends: the tokens of the conversation it extends
	afterS  float64 // since the end of the lane's previous request; 0 for seq 0
	// answered is set when the lane's previous request's reply called tools: its seq and,
	// when this request carries their results, the tool time (afterS), else nil.
	answered *toolTime
	// retry is set when the request's messages are those of the lane's previous request,
	// which failed: the harness re-sends it.
	retry bool
}

// toolTime is the tool time of a request whose reply called tools: nil when the session's
// next request does not carry their results.
type toolTime struct {
	seq   int
	toolS *float64
}

// sessions assigns requests to lanes. Its methods are safe for concurrent use.
type sessions struct {
	mu     sync.Mutex
	groups map[string][]*lane         // the lanes of each named session, in creation order
	idx    map[string]map[key][]*lane // per group: the key of each idle lane's last request
	names  map[string]bool
	convs  int // sessions inferred so far
}

func newSessions() *sessions {
	return &sessions{groups: map[string][]*lane{}, idx: map[string]map[key][]*lane{}, names: map[string]bool{}}
}

// assign places a request of group (a session name the harness gave, or "") whose messages
// have the prefix keys keys (keys[i] covers messages 0…i) and the tool messages res, sent at
// nowS. The longest prefix that is an idle lane's whole last conversation, sent by nowS,
// continues that lane; each conversation is continued at most once, so a fork or a
// concurrent sibling starts a lane of its own.
func (s *sessions) assign(group string, keys []key, res toolResults, nowS float64) assignment {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.idx[group]
	for j := len(keys) - 1; j >= 0 && idx != nil; j-- {
		for _, l := range idx[keys[j]] {
			if !l.sentBefore(nowS) {
				continue
			}
			// The same messages as a failed request: the harness re-sends it.
			retry := l.last != nil && !l.last.ok && j == len(keys)-1
			s.unindex(l)
			a := s.take(l, res, nowS, true)
			a.retry = retry
			return a
		}
	}
	if group != "" {
		for _, l := range s.groups[group] {
			if !l.busy && l.sentBefore(nowS) {
				s.unindex(l)
				return s.take(l, res, nowS, false)
			}
		}
	}
	return s.take(s.newLane(group), res, nowS, false)
}

// sentBefore reports whether l's last request was sent by nowS, so that a request sent then
// may follow it: one sent earlier, whose body the proxy read only after that request ended,
// was its concurrent sibling, not its continuation or retry, and would come after it in seq
// though sent before. (Its end is no test: a harness that gives up on a request sends the
// retry before the proxy has seen the first one end.)
func (l *lane) sentBefore(nowS float64) bool {
	return l.last == nil || l.last.sentS <= nowS
}

// take makes the next request of l, with the tool messages res, sent at nowS; matched says
// whether its messages begin with l's last conversation.
func (s *sessions) take(l *lane, res toolResults, nowS float64, matched bool) assignment {
	a := assignment{lane: l, seq: l.next}
	if l.last != nil {
		a.afterS = max(0, nowS-l.last.endS)
		if matched && l.last.ok {
			seq := l.last.seq
			a.extends, a.baseTok = &seq, l.last.tokens
		}
		if l.last.calls > 0 {
			a.answered = &toolTime{seq: l.last.seq}
			if res.answer(l.last) {
				t := round6(a.afterS)
				a.answered.toolS = &t
			}
		}
	}
	l.next++
	l.busy = true
	return a
}

// newLane opens a lane of group: the group's own name first, then "name~2"…; inferred
// sessions are "c1", "c2"…
func (s *sessions) newLane(group string) *lane {
	var name string
	for n := len(s.groups[group]) + 1; name == "" || s.names[name]; n++ {
		switch {
		case group == "":
			s.convs++
			name = fmt.Sprintf("c%d", s.convs)
		case n == 1:
			name = group
		default:
			name = fmt.Sprintf("%s~%d", group, n)
		}
	}
	l := &lane{name: name, group: group}
	s.names[name] = true
	if group != "" {
		s.groups[group] = append(s.groups[group], l)
	}
	return l
}

// release ends l's request in flight with e: l becomes idle and e's conversation may be
// continued.
func (s *sessions) release(l *lane, e ended) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.busy, l.last = false, &e
	idx := s.idx[l.group]
	if idx == nil {
		idx = map[key][]*lane{}
		s.idx[l.group] = idx
	}
	idx[e.key] = append(idx[e.key], l)
}

// unindex removes l's last conversation from the index.
func (s *sessions) unindex(l *lane) {
	if l.last == nil {
		return
	}
	idx := s.idx[l.group]
	ls := idx[l.last.key]
	for i, x := range ls {
		if x == l {
			ls = append(ls[:i:i], ls[i+1:]...)
			break
		}
	}
	if len(ls) == 0 {
		delete(idx, l.last.key)
	} else {
		idx[l.last.key] = ls
	}
}
