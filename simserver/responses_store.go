package simserver

import (
	"slices"
	"sync"
	"time"
)

// Bounds of the stored responses a previous_response_id may name: the latest
// maxStoredResponses, each for storedResponseTTL of simulated time. A stored response keeps the
// responses it continues while it is kept, so a chain stays whole as long as its last
// response does.
const (
	maxStoredResponses = 16384
	storedResponseTTL  = time.Hour
)

// storedResponse is a response kept for previous_response_id: the response it continued,
// and the messages it added to the conversation (its input, then its output).
type storedResponse struct {
	id      string
	parent  *storedResponse
	items   []chatMessage
	expires time.Time // simulated
}

// conversation appends the messages of the chain that ends with r, oldest first, to msgs.
func (r *storedResponse) conversation(msgs []chatMessage) []chatMessage {
	var chain []*storedResponse
	for c := r; c != nil; c = c.parent {
		chain = append(chain, c)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		msgs = append(msgs, chain[i].items...)
	}
	return msgs
}

// responseStore holds the stored responses, oldest first.
type responseStore struct {
	mu    sync.Mutex
	byID  map[string]*storedResponse
	order []*storedResponse // oldest first, from head on
	head  int
}

// put stores r, dropping the expired responses and the oldest beyond maxStoredResponses.
func (st *responseStore) put(r *storedResponse, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = map[string]*storedResponse{}
	}
	st.byID[r.id] = r
	st.order = append(st.order, r)
	for st.head < len(st.order) && (len(st.byID) > maxStoredResponses || !now.Before(st.order[st.head].expires)) {
		delete(st.byID, st.order[st.head].id)
		st.order[st.head] = nil
		st.head++
	}
	// Copied once the dropped responses are half the slice, which so stays within twice
	// what it holds.
	if st.head > len(st.order)/2 {
		st.order, st.head = slices.Clone(st.order[st.head:]), 0
	}
}

// get returns the stored response id names, or nil when there is none or it has expired.
func (st *responseStore) get(id string, now time.Time) *storedResponse {
	st.mu.Lock()
	defer st.mu.Unlock()
	r := st.byID[id]
	if r == nil || !now.Before(r.expires) {
		return nil
	}
	return r
}
