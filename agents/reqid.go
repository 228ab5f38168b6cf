package agents

import (
	"context"
	"time"
)

// sentKey is the context key of the request an HTTP call sends: its id and send time.
type sentKey struct{}

// sending is what the context of an HTTP call tells of the request it sends.
type sending struct {
	id   string
	sent time.Time
}

// withRequest returns ctx carrying the id (events.jsonl's request) of the request sent under
// it and when its request_sent event says it was sent, for the HTTP transport (sentRequest).
func withRequest(ctx context.Context, id string, sent time.Time) context.Context {
	return context.WithValue(ctx, sentKey{}, sending{id: id, sent: sent})
}

// sentRequest returns the id of the request an HTTP call under ctx sends and its send time,
// simulated (its request_sent event's), or "" and the zero time when the call is none of the
// agents'. The harness tells both to its embedded simulator, in request headers: the silence
// the verdict judges begins at that send time.
func sentRequest(ctx context.Context) (id string, sent time.Time) {
	s, _ := ctx.Value(sentKey{}).(sending)
	return s.id, s.sent
}
