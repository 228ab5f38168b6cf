package agents

import "context"

// requestIDKey is the context key of the id of the request an HTTP call sends.
type requestIDKey struct{}

// withRequestID returns ctx carrying the id (events.jsonl's request) of the request sent
// under it, for the HTTP transport to read (RequestIDOf).
func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDOf returns the id of the request an HTTP call under ctx sends, "" when it is none
// of the agents': the harness tells it its embedded simulator (simserver.RequestIDHeader).
func RequestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
