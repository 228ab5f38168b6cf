// Package agents simulates the agents of an LLM harness: what each agent does, round after
// round, and how it talks to the server. A harness (package harness) builds one Env for a run
// and one Agent per agent, and runs each Agent on a goroutine of its own.
//
// # The agent loop
//
// Agent.Run plays the agent's rounds from the workload (package workloads): the system message
// and the task, then, per round, (1) the read step — the tool time, then a user message of
// read_tokens of text; (2) a pacer permit (package pacer), after a check that the request fits
// context.max_context_tokens; (3) one streaming chat completion carrying the whole
// conversation, retried as workloads.Retry allows; (4) the permit released with how the
// request ended; (5) the assistant's content appended, so the conversation grows append-only
// as a server's prefix cache sees real agents' grow; (6) the think time. Text is made from the
// workload's seed, the agent and the round, so the same seed sends the same bytes.
//
// With tools (tools.set other than none, Env.Tools) there is no read step: every request
// carries the run's tool definitions, and the work between model calls follows the reply — its
// tool calls run in parallel, each for its latency, and are answered by tool messages; a reply
// without one ends the task, and the next begins with a user message; a model that has never
// called a tool gets the steps task.steps plans, the agent making their calls itself
// (docs/agentic.md). The client assembles streamed tool calls (Result.ToolCalls) and classifies
// a reply whose calls cannot be answered as events.ClassMalformedToolCall. An agent
// given a Script (Env.Scripts: a replayed session, docs/trace.md) plays its turns instead:
// their prompts, lengths and waits, closed loop or at their timestamps. Every step is recorded
// as an events.Event through Env.Recorder (events.jsonl, docs/files.md), and the Board says
// at any instant what every agent is doing and which streams are silent, for the watchdog.
//
// # The streaming client
//
// Client.Call is one streaming chat completion, measured in simulated time with
// reasoning-aware timings (send, headers, first reasoning token, first content token, every
// data frame, end) and ended by the timeout policy of workloads.Timeouts: a whole-request
// deadline, and a silence timer for the time to first token and the silence between data
// frames. A failed call is data: a Result whose Class (events.Class) names the failure from
// typed errors, so the harness can tell slow from stuck. An Observer sees the call's events
// as they happen; a Tap sees every request as it ends, with its frames' arrival times.
//
// Calls are built and sent by go-openai; the stream's data lines are read with the package's
// own SSE reader and a field scanner that understands both delta.reasoning_content (SGLang,
// DeepSeek) and delta.reasoning (vLLM ≥ 0.11), falling back to encoding/json for anything
// unusual (docs/speed.md says why). A Request whose API is workloads.APIResponses goes
// through the Responses API instead (go-openai's CreateResponseStream sends it): the
// conversation as input items, the event stream read by the same reader into the same
// Result, timings and classes (responses_call.go, docs/agentic.md). Every time comes from a *clock.Clock, so --speedup runs
// and testing/synctest bubbles execute the same code.
package agents
