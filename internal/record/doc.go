// Package record is the recording proxy behind `agentsim record`: a transparent reverse proxy
// between a real harness and its OpenAI-compatible server that writes what passes through as
// an agentsim.trace/v1 trace (docs/trace.md), and, with a Watcher, judges the harness live as
// `agentsim run` judges its own agents (docs/verdicts.md).
//
// Bytes pass through as they arrive: responses are copied by net/http/httputil.ReverseProxy
// with FlushInterval −1, so every read from the server is written and flushed to the harness
// at once. A tee beside the copy keeps the bytes of each read and parses them — SSE frames or a
// JSON body — while the proxy waits for the next read, so the parse never delays a byte; only
// a read that ends the response ([DONE], or the last byte of a JSON body) is parsed before it
// is passed on, so the conversation it completes is known before the harness can continue it.
//
// Chat and legacy completions (POST …/chat/completions, …/completions) and the Responses API
// (POST …/responses, read into the same fields: responses.go) are recorded, each line saying
// which; every other endpoint (/v1/models, /metrics…) passes through untouched. Sessions come
// from an X-Session-ID, X-Agent-ID or session-id header, else a Responses request's
// prompt_cache_key, else the request's user field, else its previous_response_id, else the
// conversation itself: a request whose messages begin with an earlier request's messages and
// reply continues that request's session. Messages are hashed, never stored, unless a content
// writer is given.
package record
