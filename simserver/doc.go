// Package simserver is the simulated OpenAI-compatible inference server: an HTTP front on the
// engine model of package simserver/engine. Any OpenAI client may use it; agentsim embeds it
// as its default target and `agentsim serve` runs it alone.
//
// # Routes
//
//   - POST /v1/chat/completions: chat completions, streamed as server-sent events
//     (chat.completion.chunk frames, reasoning deltas under Options.ReasoningField, the usage
//     chunk when stream_options.include_usage asks, then [DONE]) or answered whole.
//   - GET /v1/models: the profile's model.
//   - GET /metrics: Prometheus metrics under SGLang and vLLM names, plus decode_running and
//     prefill_inflight.
//   - GET /health: 200.
//
// With Options.APIKey set, /v1/* requires "Authorization: Bearer <key>".
//
// # Errors
//
// Errors carry the OpenAI error body {"error":{"message","type","param","code"}}. Malformed
// requests get 400 naming the parameter, oversized bodies 413. The engine's rejections map to
// statuses here: TooLong is 400 (param "messages"), RateLimited 429 with Retry-After in whole
// seconds, Overloaded and QueueFull 503. A generation that fails mid-stream (engine.EndFail)
// sends an error frame inside the 200 stream (a 503 body when not streaming); one whose
// delivery is cut (engine.EndCut) loses its connection before the finish chunk and [DONE].
//
// # Text and tokens
//
// Generated text is one vocabulary word of at most four letters per token, and CountTokens
// counts such a word as one token, so a client that sends back what it received grows its
// context as against a real model.
//
// # Units
//
// Every time is simulated time from Options.Clock (package clock): latency histograms are in
// simulated seconds, the access log's latency in simulated microseconds, Retry-After in
// simulated seconds. The engine model, its units and its calibration are documented in package
// simserver/engine and docs/engine.md.
//
// # Tests
//
// Package simserver/simtest starts a Server for a test in one line, inside a synctest bubble
// or not.
package simserver
