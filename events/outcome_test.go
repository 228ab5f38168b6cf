package events

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRequestOutcome checks each outcome's spelling in events.jsonl and its terminal event
// kind, both ways.
func TestRequestOutcome(t *testing.T) {
	for _, tc := range []struct {
		o    RequestOutcome
		want string
		kind Kind
	}{
		{RequestSuccess, "success", Done},
		{RequestTimeout, "timeout", Timeout},
		{RequestError, "error", Error},
		{RequestCancelled, "cancelled", Cancelled},
	} {
		assert.Equal(t, tc.want, string(tc.o), "the spelling of %#v", tc.o)
		assert.Equal(t, tc.kind, tc.o.Kind(), "%q.Kind()", tc.o)
		assert.Equal(t, tc.o, tc.kind.RequestOutcome(), "%q.RequestOutcome()", tc.kind)
	}
	assert.Len(t, RequestOutcomes, 4, "RequestOutcomes lists every outcome")
	assert.Equal(t, RequestOutcome(""), RoundDone.RequestOutcome(), "a kind that ends no request")
}

// TestClassOutcome checks how a request of each failure class ended.
func TestClassOutcome(t *testing.T) {
	for _, tc := range []struct {
		c       Class
		want    RequestOutcome
		timeout bool
	}{
		{ClassNone, RequestSuccess, false},
		{ClassTimeoutRequest, RequestTimeout, true},
		{ClassTimeoutTTFT, RequestTimeout, true},
		{ClassTimeoutIdle, RequestTimeout, true},
		{ClassCancelled, RequestCancelled, false},
		{ClassHTTPStatus, RequestError, false},
		{ClassErrorFrame, RequestError, false},
		{ClassOther, RequestError, false},
	} {
		assert.Equal(t, tc.want, tc.c.Outcome(), "%q.Outcome()", tc.c)
		assert.Equal(t, tc.timeout, tc.c.Timeout(), "%q.Timeout()", tc.c)
	}
}
