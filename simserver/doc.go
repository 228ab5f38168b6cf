// Package simserver is the simulated OpenAI-compatible inference server: an HTTP front on the
// engine model of package internal/engine. Any OpenAI client may use it; agentsim embeds it
// as its default target and `agentsim serve` runs it alone.
//
// # Routes
//
//   - POST /v1/chat/completions: chat completions, streamed as server-sent events
//     (chat.completion.chunk frames, reasoning deltas under Options.ReasoningField, the usage
//     chunk when stream_options.include_usage asks, then [DONE]) or answered whole.
//   - POST /v1/responses: the Responses API on the same engine and tool model (docs/responses.md),
//     streamed as its events (response.created … response.completed) or answered with the
//     response object; responses are stored for previous_response_id, and its errors are in
//     OpenAI's own shape (code a string or null).
//   - GET /v1/models: the served model names (Options.ServedModelNames, by default the
//     profile's model), each card with an "agentsim" object giving the speedup and profile.
//   - GET /metrics: Prometheus metrics under SGLang and vLLM names, plus decode_running and
//     prefill_inflight.
//   - GET /health: 200.
//
// With Options.APIKey set, /v1/* requires "Authorization: Bearer <key>". Every response carries
// SpeedupHeader, the clock's speedup, so a harness can run on the server's clock.
//
// When a stream's head and role chunk go out, and how many tokens each chunk carries, are the
// profile's (engine.Profile.FirstByte, StreamInterval, StreamCoalesceTokens).
//
// # Errors
//
// Errors carry the OpenAI error body {"error":{"message","type","param","code"}}. Requests are
// checked in vLLM's order and answered with its statuses and messages: a body of the wrong
// JSON type or out of range (temperature "hot", top_p 0, NaN, an unknown reasoning_effort,
// n other than 1) gets 400 naming the parameter; a model not served gets 404 "The model `x`
// does not exist."; max_tokens beyond the context the prompt leaves gets 400 with the token
// numbers. Oversized bodies get 413, bodies that do not arrive within Options.ReadTimeout
// (wall time) 408. The engine's rejections map to
// statuses here: TooLong is 400 (param "messages"), RateLimited 429 with Retry-After in whole
// seconds, Overloaded, QueueFull and Unavailable (a crashed scheduler) 503. A generation that
// fails mid-stream (engine.EndFail) sends an error frame inside the 200 stream (a 503 body
// when not streaming); one whose delivery is cut (engine.EndCut) loses its connection before
// the finish chunk and [DONE]. A request the engine aborts (*engine.Aborted, a disaggregated
// timeout) gets what SGLang sends: an error frame of type INTERNAL_SERVER_ERROR, code 500,
// then [DONE], in a 200 stream (a 500 body when not streaming). A client that disconnects
// cancels its request (engine.Engine.Cancel); one the server ends itself is dropped at once
// (engine.Engine.Drop).
//
// # Tool calls
//
// A request that offers tools (and tool_choice other than none) may be answered with tool
// calls, as a model in an agent's loop answers (docs/engine.md §8): how many tool steps a user
// request takes is drawn once per conversation from the profile's agent section and counted
// from the history; which tools are called is weighted among the offered functions, never one
// whose name says it changes or runs things or asks a person unless agent.allow names it; the
// arguments are valid against the tool's JSON Schema, written from the simulator's vocabulary.
// Streamed in OpenAI's shape (or a variant, engine.ToolCallStyle), they are decoded as any
// output: their tokens take decode steps, count against max_tokens and in usage, and every
// fault applies to them. Tools, tool_choice and tool messages are checked: a schema the
// simulator cannot satisfy, a choice naming no offered tool, a tool message answering no call
// are each a 400 naming the problem.
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
// simulated seconds, the access log's timestamps and latencies in simulated time (so they
// cross-check), Retry-After in simulated seconds. The exceptions are the network protections,
// Options.ReadTimeout and the keep-alive idle timeout, which are wall time: they bound how fast
// a real client must send, which the speedup does not change.
//
// # Hostile clients
//
// Memory follows the bytes a client sends, never the lengths it declares: a body is read with
// the size limit and grows as it arrives, and request heads are capped at 64 KiB. A client
// that trickles its request is cut off at Options.ReadTimeout. The engine model, its units and its calibration are documented in package
// internal/engine and docs/engine.md.
//
// # Tests
//
// Package simserver/simtest starts a Server for a test in one line, inside a synctest bubble
// or not.
package simserver
