// Package engine is the model behind the simulated inference server: continuous batching
// engines — a prefill/decode disaggregated pair, as SGLang runs DeepSeek-V4-Flash, or one
// colocated engine that mixes prefill chunks into decode steps (vLLM V1) or alternates prefill
// and decode batches (SGLang) — and the faults that make such a stack misbehave. It knows nothing of HTTP; package simserver
// puts an OpenAI-compatible front on it.
//
// # The model
//
// A Job (prompt length, conversation prefix, output cap, reasoning effort, and for a reply
// that calls tools the length of the calls the HTTP front wrote) enters with Submit and
// becomes a Gen. On the disaggregated engine the decode engine first reserves its prompt's
// KV (requests waiting too long for it, or for their KV to arrive, are aborted with an
// *Aborted), the prefill engine computes its prompt in chunked steps, skipping what the prefix
// cache holds, and a serialised KV transfer hands it to the decode engine. A batch loop runs up
// to MaxRunning requests and emits one token for each per step, admitting requests while their
// KV fits and retracting the newest when it overflows (a retracted request recomputes its
// context when it runs again); on a colocated engine the same loop also prefills. Profile.Engine
// chooses. The step-time formulas and
// every parameter are on Profile. Profiles are YAML files: the built-ins (DSV4PD, the default;
// Ideal; a vLLM Llama-3.1-8B profile) are embedded, LoadProfile reads a user's file, and
// Profile.YAML prints one resolved. The reader of a Gen calls
// Next for its tokens, End to learn how the delivery ends, and Cancel when its client goes
// (the engine frees it after the profile's AbortDelay) or Drop when the server ends it.
//
// Every decision about a request (its output length, whether a fault strikes it) comes from a
// random source seeded by the fault set's seed and the request's Key, so a run is
// reproducible. How the model behaves in a tool-calling loop is the profile's Agent section,
// whose draws the front makes from the same seed (Faults.Seed).
//
// # Units
//
// Lengths are in tokens. Every time is simulated time from the engine's clock (package
// clock): durations in a Profile, Rejection.RetryAfter, the fault durations and the stall
// schedule are all simulated; at --speedup s they pass s times faster than wall time, and in a
// testing/synctest bubble they pass in virtual time. Rates (Stats.Logged.GenThroughput) are
// per simulated second.
//
// At a speedup the machine cannot keep up with, the simulator's own work falls behind the
// model it runs; Lag measures how late, in simulated time, tokens are delivered compared with
// the model (the HTTP front reports each delivery with Delivered), and Behind how far behind
// the model the engine is now (docs/engine.md, "The simulator's own lag").
//
// # Rejections and endings
//
// Submit refuses a request before its generation with a *Rejection whose Reason (TooLong,
// RateLimited, Overloaded, QueueFull, Unavailable) says why in the engine's terms; the HTTP
// front maps each reason to a status. An admitted generation ends as End says: EndFinish,
// EndFail (it fails mid-generation) or EndCut (its delivery is cut) — unless the engine aborts
// it (a disaggregated timeout), which Next reports as an *Aborted.
//
// # Faults
//
// ParseFaults builds a Faults set from names and name.key=value parameters; FaultNames lists
// the faults. Each fault is a struct whose tagged fields are its parameters (decoded from
// text, then checked by Validate), with one file per fault.
//
// # Calibration
//
// DSV4PD is calibrated to the incident's measurements, which docs/engine.md lists with the
// model; TestDecisiveBatchingCalibration and TestPureDecodeThroughput check them in virtual
// time (go test ./internal/engine -run 'Calibration|Throughput' -v).
package engine
