package simserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResponseStoreBounds: the store keeps the latest maxStoredResponses, each until its
// expiry; a kept response keeps the chain it continues whole, evicted parents included.
func TestResponseStoreBounds(t *testing.T) {
	var st responseStore
	now := time.Unix(1_000_000, 0)
	root := &storedResponse{id: "resp_root", items: []chatMessage{textMessage("user", "first")}, expires: now.Add(storedResponseTTL)}
	st.put(root, now)
	last := root
	for i := range maxStoredResponses {
		last = &storedResponse{id: fmt.Sprintf("resp_%d", i), parent: last, items: []chatMessage{textMessage("assistant", "x")}, expires: now.Add(storedResponseTTL)}
		st.put(last, now)
	}
	assert.Nil(t, st.get("resp_root", now), "the oldest is dropped past the count")
	require.NotNil(t, st.get("resp_0", now))
	assert.Len(t, st.byID, maxStoredResponses)
	assert.LessOrEqual(t, len(st.order)-st.head, maxStoredResponses)
	assert.LessOrEqual(t, cap(st.order), 4*maxStoredResponses, "the order slice stays within bounds")

	conv := st.get(last.id, now).conversation(nil)
	require.Len(t, conv, maxStoredResponses+1, "the chain is whole, its dropped root included")
	assert.Equal(t, textMessage("user", "first"), conv[0])

	later := now.Add(storedResponseTTL)
	assert.Nil(t, st.get(last.id, later), "a response is gone once it expires")
	st.put(&storedResponse{id: "resp_new", expires: later.Add(storedResponseTTL)}, later)
	assert.Len(t, st.byID, 1, "putting drops the expired")
}
