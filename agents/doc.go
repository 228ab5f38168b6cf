// Package agents simulates the agents of an LLM harness. Its core is one streaming chat
// completion, Client.Call, measured in simulated time with reasoning-aware timings (send,
// headers, first reasoning token, first content token, every data frame, end) and ended by
// the timeout policy of workloads.Timeouts: a whole-request deadline, and a silence timer for the
// time to first token and the silence between data frames. A failed call is data: a Result whose
// Class names the failure from typed errors, so the harness can tell slow from stuck.
//
// Calls go through go-openai; the stream's data lines are read with a field scanner that
// understands both delta.reasoning_content (SGLang, DeepSeek) and delta.reasoning (vLLM ≥ 0.11),
// falling back to encoding/json for anything unusual. Every time comes from a *clock.Clock,
// so --speedup runs and testing/synctest bubbles execute the same code.
package agents
