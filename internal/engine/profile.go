package engine

import (
	"math"
	"time"
)

// Profile holds the parameters of the engine model. All durations are simulated time. A
// profile is data: a YAML file whose keys are the yaml tags below (see ParseProfile, and the
// built-ins in profiles/*.yaml, which document every value's unit and source).
//
// Engine chooses the model. EngineDisaggregated (the default) is a pair of engines, prefill and
// decode, joined by a KV transfer, as below; before its prefill a request waits until the
// decode engine has reserved its prompt's KV (BootstrapTimeout bounds the wait, WaitingTimeout
// the time from the reservation to the KV's arrival in decode). The colocated engines run the
// decode engine's batch loop alone and prefill inside it: EngineColocatedMixed puts prefill
// chunks into decode steps within StepTokenBudget (a step then takes t_decode + t_prefill),
// EngineColocatedAlternating runs prefill-only steps (t_prefill) while a chunk waits, pausing
// decoding; EngineColocatedParallel prefills every request on its own, from its admission, for
// ParallelPrefill, beside the decode steps and the other prefills. On every engine the step
// (or, parallel, the prefill) that completes a context emits its next token.
//
// Prefill engine (chunked prefill). Each step takes up to PrefillChunkTokens uncached prompt
// tokens from the queue, first come first served, splitting long prompts across steps. A step
// that computes chunks c_i of requests whose earlier context (cached prefix plus chunks already
// computed) is p_i takes
//
//	t_prefill = PrefillBase + PrefillPerToken·Σc_i + PrefillAttnPerToken2Ns·Σ c_i·(p_i + c_i/2)
//	          + PrefillAttnPoolNs·Σ c_i·o_i
//
// — linear work per token, attention over the context before it, and, over a unified KV pool,
// the masked read of o_i, the KV other requests hold in the pool (PoolPairs). Tokens found in the prefix
// cache (keyed by the conversation prefix at message boundaries, PrefixCacheTokens capacity,
// least recently used out) are not computed.
//
// KV transfer. A prefilled request waits for a bootstrap handshake, which the transfer thread
// serves one request at a time (TransferSerial + TransferPerTokenNs·prompt each), then arrives in
// the decode engine TransferLatency later. Meanwhile it counts in the prefill inflight queue.
//
// Decode engine (continuous batching). Up to MaxRunning requests run; one step emits one token
// for each and takes
//
//	t_decode = DecodeBase + DecodePerSeq·B + DecodePerKVTokenNs·K + DecodePerSeqKVTokenNs·B·K
//
// with B the running batch and K the total KV tokens (context plus output so far) in it, so long
// contexts slow every request in the batch (and, over a unified KV, the more so the larger the
// batch). A request is admitted only while its context fits
// in KVCapacityTokens; when growth overflows the capacity, the newest requests are retracted
// (their KV freed) and requeued at the front; a retracted request recomputes its whole context
// (prompt plus output so far) in prefill chunks before it decodes again. With KVFull
// KVFullFail the engine fails every running request instead, as llama.cpp's server does.
//
// Disconnects. A request whose client has gone keeps its slot and KV for AbortDelay; with
// DecodeIgnoresDisconnect one already in decode runs on to its end.
//
// Noise. Each decode step's duration is multiplied by a seeded draw: lognormal with mean 1
// and sigma StepJitterSigma, times SlowStepFactor with probability SlowStepProbability.
//
// Admission. A request reaches the scheduler RequestOverhead + RequestOverheadPerToken·prompt
// after it arrives (Admission): the server's own work for it outside the engine's steps
// (reading it, the chat template, tokenizing the whole prompt), which holds no slot, KV or step (llama-server: TTFT less its own prompt_ms, docs/calibrate.md §2).
//
// Streaming. FirstByte says when a stream's head and role chunk go out; StreamInterval how many
// tokens a chunk carries; StreamCoalesceTokens how many a chunk may carry when the writer falls
// behind.
//
// Server gauges in the SGLang names refresh the way SGLang's do: prefill gauges on each
// prefill batch, decode gauges every DecodeLogInterval decode steps (and once when decode goes
// idle); the plain decode_running / prefill_inflight gauges are live.
type Profile struct {
	// Name is the profile's name, as --profile takes it.
	Name string `yaml:"name"`
	// Model is the model name /v1/models lists and the metrics label.
	Model string `yaml:"model"`
	// Description says, in one line, what stack the profile models.
	Description string `yaml:"description"`

	// Engine is how prefill and decode share the hardware: EngineDisaggregated (the zero
	// value, ""), EngineColocatedMixed, EngineColocatedAlternating or EngineColocatedParallel.
	Engine EngineKind `yaml:"engine"`
	// StepTokenBudget is, for EngineColocatedMixed, the most tokens one step computes: one per
	// decoding request plus the prefill chunks (vLLM's max_num_batched_tokens). Other engines
	// ignore it; 0 there.
	StepTokenBudget int `yaml:"step_token_budget"`

	// FirstByte is when a stream's HTTP head and role chunk go out: FirstByteAtToken,
	// FirstByteHeaders or FirstByteAtAdmission ("", the zero value, means admission).
	FirstByte FirstByte `yaml:"first_byte"`
	// StreamInterval is how many tokens one stream chunk carries, as SGLang's and vLLM's
	// --stream-interval; 0 means 1.
	StreamInterval int `yaml:"stream_interval"`
	// StreamCoalesceTokens is the most tokens one chunk may carry when the writer finds more
	// than StreamInterval tokens waiting (it has fallen behind the engine). At most
	// StreamInterval (0 means that) sends a backlog as consecutive chunks of StreamInterval
	// tokens; more coalesces it, for raw-throughput runs. Either way the server counts the
	// chunks written behind and the chunks coalesced (see the agentsim_stream_* metrics).
	StreamCoalesceTokens int `yaml:"stream_coalesce_tokens"`

	// RequestOverhead is the time from a request's arrival to its scheduler taking it, simulated
	// time: the server's own work for it outside the engine's steps (reading it, the chat
	// template, tokenizing). It holds no slot or KV and delays no other request. 0 means none.
	RequestOverhead time.Duration `yaml:"request_overhead"`
	// RequestOverheadPerToken is that work's cost per prompt token, cached or not (the whole
	// prompt is templated and tokenized), simulated time.
	RequestOverheadPerToken time.Duration `yaml:"request_overhead_per_token"`

	// PrefillBase is the fixed cost of a prefill step, simulated time.
	PrefillBase time.Duration `yaml:"prefill_base"`
	// PrefillPerToken is the cost of each uncached prompt token computed, simulated time.
	PrefillPerToken time.Duration `yaml:"prefill_per_token"`
	// PrefillAttnPerToken2Ns is the attention cost in nanoseconds per (token × context token).
	PrefillAttnPerToken2Ns float64 `yaml:"prefill_attn_per_token2_ns"`
	// PrefillAttnPoolNs is the cost in nanoseconds per (prompt token computed × KV token that
	// other requests hold in the pool): over one KV pool that every sequence reads whole,
	// masked (llama.cpp's unified KV cache), a prompt's attention also passes over every other
	// request's KV. 0 means a KV that each sequence reads only its own of (paged: vLLM, SGLang).
	PrefillAttnPoolNs float64 `yaml:"prefill_attn_pool_ns"`
	// KVIdleSlots keeps a finished request's KV in the pool, in its slot, until a later request
	// takes the slot: one that continues its conversation (its prefix holds the finished
	// request's last message boundary) takes that slot back, any other the least recently used
	// idle one once the running requests and the idle slots fill MaxRunning. PrefillAttnIdleNs
	// prices what idle slots hold (llama-server, whose attention spans every KV cell in use,
	// and whose default clears idle slots' cells but leaves them as holes below the last one
	// in use, docs/engine.md §3). Idle KV is not counted against KVCapacityTokens:
	// the server clears a slot's KV when the slot takes another prompt. Colocated-mixed and
	// colocated-alternating engines only.
	KVIdleSlots bool `yaml:"kv_idle_slots"`
	// PrefillAttnIdleNs is the cost in nanoseconds per (prompt token computed × KV token idle
	// slots hold), with KVIdleSlots: what a prompt's attention pays for the cells finished
	// requests left. 0 means PrefillAttnPoolNs, the running requests' price.
	PrefillAttnIdleNs float64 `yaml:"prefill_attn_idle_ns"`
	// LaunchPerIdleToken is the scheduler's own work when it takes a new request, per token
	// that finished requests' slots hold and no earlier launch has dealt with, simulated time:
	// llama-server, by default (--cache-idle-slots), saves every idle slot to its RAM prompt
	// cache, and clears it, as it launches a task, before its next step. No step runs
	// meanwhile, and the requests that arrive meanwhile join the step after it. The launched
	// request's own conversation's slot is not idle and costs nothing. 0 means none.
	// Colocated-mixed and colocated-alternating engines only.
	LaunchPerIdleToken time.Duration `yaml:"launch_per_idle_token"`
	// PrefillChunkTokens is the most prompt tokens one prefill step computes.
	PrefillChunkTokens int `yaml:"prefill_chunk_tokens"`
	// PrefixCacheTokens is the prefix cache's capacity, in tokens.
	PrefixCacheTokens int `yaml:"prefix_cache_tokens"`

	// TransferSerial is the transfer thread's fixed cost per request, simulated time.
	TransferSerial time.Duration `yaml:"transfer_serial"`
	// TransferPerTokenNs is the transfer thread's cost in nanoseconds per prompt token.
	TransferPerTokenNs float64 `yaml:"transfer_per_token_ns"`
	// TransferLatency is the time from the end of the handshake until the decode engine has
	// the KV, simulated time.
	TransferLatency time.Duration `yaml:"transfer_latency"`

	// DecodeBase is the fixed cost of a decode step, simulated time; it must be > 0.
	DecodeBase time.Duration `yaml:"decode_base"`
	// DecodePerSeq is the cost of each running request in a decode step, simulated time.
	DecodePerSeq time.Duration `yaml:"decode_per_seq"`
	// DecodePerKVTokenNs is the decode step's cost in nanoseconds per KV token in the batch.
	DecodePerKVTokenNs float64 `yaml:"decode_per_kv_token_ns"`
	// DecodePerSeqKVTokenNs is the decode step's cost in nanoseconds per running request × KV
	// token in the batch: attention over one KV pool that every sequence of the batch reads
	// whole, masked (llama.cpp's unified KV cache). 0 means none.
	DecodePerSeqKVTokenNs float64 `yaml:"decode_per_seq_kv_token_ns"`
	// DecodeMultiSeq is added to a decode step of two or more sequences, simulated time: a
	// CPU backend computes one sequence's token by matrix-vector kernels and a batch of them by
	// matrix-matrix ones (llama.cpp's ggml on this project's machine: 3.3 ms of compute at one
	// sequence, 4.9–5.1 at two, 5.0–5.7 at four), so the step does not grow from one sequence
	// to two as it does after. 0 means none.
	DecodeMultiSeq time.Duration `yaml:"decode_multi_seq"`
	// MaxRunning is the decode batch limit, in requests.
	MaxRunning int `yaml:"max_running"`
	// KVCapacityTokens is the decode engine's KV capacity, in tokens.
	KVCapacityTokens int `yaml:"kv_capacity_tokens"`
	// KVFull is what the batch loop does when the running requests' KV outgrows
	// KVCapacityTokens: KVFullRetract ("", the zero value) or KVFullFail.
	KVFull KVFull `yaml:"kv_full"`
	// DecodeLogInterval is how many decode steps pass between refreshes of the SGLang-named
	// decode gauges.
	DecodeLogInterval int `yaml:"decode_log_interval"`

	// StepJitterSigma is the sigma of the lognormal multiplier every decode step's duration
	// is drawn with, exp(σ·N(0,1) − σ²/2), whose mean is 1; 0 means deterministic steps.
	StepJitterSigma float64 `yaml:"step_jitter_sigma"`
	// SlowStepProbability is the chance that a decode step is slow, from 0 to 1.
	SlowStepProbability float64 `yaml:"slow_step_probability"`
	// SlowStepFactor multiplies a slow step's duration; at least 1 when slow steps happen.
	SlowStepFactor float64 `yaml:"slow_step_factor"`

	// BootstrapTimeout is, for EngineDisaggregated, how long a request may wait for the decode
	// engine to reserve its KV before it is aborted (SGLang's
	// SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT), simulated time; 0 means for ever.
	BootstrapTimeout time.Duration `yaml:"bootstrap_timeout"`
	// WaitingTimeout is, for EngineDisaggregated, how long a request may take from its KV
	// reservation until its KV arrives in the decode engine (prefill queue, prefill and
	// transfer) before it is aborted (SGLANG_DISAGGREGATION_WAITING_TIMEOUT), simulated time;
	// 0 means for ever.
	WaitingTimeout time.Duration `yaml:"waiting_timeout"`
	// AbortDelay is how long after its client disconnects a request keeps its slot and KV
	// (SGLang aborts 2 s after the disconnect), simulated time.
	AbortDelay time.Duration `yaml:"abort_delay"`
	// DecodeIgnoresDisconnect, for EngineDisaggregated, lets a request that has reached the
	// decode engine when its abort comes run on to its end: the PD router does not pass the
	// disconnect on to the decode server.
	DecodeIgnoresDisconnect bool `yaml:"decode_ignores_disconnect"`

	// TokenizerRatio is how many of the server's tokens one token of agentsim's estimate
	// (simserver.CountTokens) is: prompt lengths and prefix-cache blocks are the estimate times
	// this ratio, so every per-token cost and capacity of the profile is in the server's
	// tokens (output lengths are the server's already: max_tokens counts them). 0 means 1.
	TokenizerRatio float64 `yaml:"tokenizer_ratio"`

	// MaxContextTokens is the longest prompt plus output a request may have, in tokens.
	MaxContextTokens int `yaml:"max_context_tokens"`
	// Efforts gives the output length, when the client does not force it, per
	// reasoning_effort ("" for requests without one).
	Efforts map[string]LengthProfile `yaml:"efforts"`

	// Agent is how the model behaves in a tool-calling loop, for requests that offer tools.
	Agent Agent `yaml:"agent"`
}

// EngineKind is how prefill and decode share the hardware.
type EngineKind string

// The engines.
const (
	// EngineDisaggregated runs prefill and decode on separate engines joined by a KV transfer,
	// as SGLang's prefill/decode disaggregation: a long prefill never slows a decode step.
	EngineDisaggregated EngineKind = "disaggregated"
	// EngineColocatedMixed runs one loop whose steps carry a token for every decoding request
	// plus prefill chunks, within StepTokenBudget, as vLLM V1: a prefill stretches the steps it
	// rides in.
	EngineColocatedMixed EngineKind = "colocated-mixed"
	// EngineColocatedAlternating runs one loop that alternates prefill batches and decode
	// batches, prefill first, as SGLang without mixed chunks: a long prefill pauses decoding.
	EngineColocatedAlternating EngineKind = "colocated-alternating"
	// EngineColocatedParallel prefills every admitted request on its own, at once with the
	// others, sharing no compute: a request's prefill neither waits for another's nor pauses
	// decoding, and lasts ParallelPrefill, slowed only by the load. llm-d-inference-sim times
	// requests so (each request sleeps its own prefill-overhead + n·prefill-time-per-token,
	// times its time-factor-under-load).
	EngineColocatedParallel EngineKind = "colocated-parallel"
)

// KVFull is what an engine does when its running requests' KV outgrows its capacity.
type KVFull string

// The behaviours of a full KV pool.
const (
	// KVFullRetract sends the newest running requests back to the queue, their KV freed, to
	// recompute their context when they run again, as SGLang and vLLM do.
	KVFullRetract KVFull = "retract"
	// KVFullFail fails every running request mid-stream, as llama.cpp's server does when
	// llama_decode finds no room in the KV cache: each stream gets the error "Context size has
	// been exceeded." and ends.
	KVFullFail KVFull = "fail"
)

// FirstByte is when a stream's first bytes go out.
type FirstByte string

// The first-byte behaviours of real servers.
const (
	// FirstByteAtAdmission sends the HTTP head and the role chunk as soon as the request is
	// admitted: a request that never gets a token is an open, silent stream.
	FirstByteAtAdmission FirstByte = "admission"
	// FirstByteHeaders sends the HTTP head at admission and the role chunk with the first
	// token, as vLLM's OpenAI server does.
	FirstByteHeaders FirstByte = "headers"
	// FirstByteAtToken sends nothing, not even the HTTP head, until the first token, as
	// SGLang's chat handler does.
	FirstByteAtToken FirstByte = "first-token"
)

// LengthProfile is the natural output length of a request: uniform in [Min, Max] tokens, of
// which ReasoningFraction are reasoning tokens when reasoning is on.
type LengthProfile struct {
	// Min and Max bound the output length, in tokens.
	Min int `yaml:"min"`
	Max int `yaml:"max"`
	// ReasoningFraction is the share of the output that is reasoning, from 0 to below 1.
	ReasoningFraction float64 `yaml:"reasoning_fraction"`
}

// Admission returns the time from a request's arrival to its scheduler taking it, for a
// prompt of promptTokens: RequestOverhead + RequestOverheadPerToken·promptTokens.
func (p *Profile) Admission(promptTokens int) time.Duration {
	return p.RequestOverhead + time.Duration(promptTokens)*p.RequestOverheadPerToken
}

// PrefillStep returns the duration of one prefill step over chunks (tokens computed per request)
// whose earlier contexts are prior, beside pool KV tokens that requests without a chunk in the
// step hold in the same KV pool.

func (p *Profile) PrefillStep(chunks, prior []int, pool int) time.Duration {
	var tokens, attn float64
	for i, c := range chunks {
		tokens += float64(c)
		attn += float64(c) * (float64(prior[i]) + float64(c)/2)
	}
	d := p.PrefillBase + time.Duration(tokens*float64(p.PrefillPerToken)+attn*p.PrefillAttnPerToken2Ns)
	if p.PrefillAttnPoolNs > 0 {
		d += time.Duration(PoolPairs(chunks, prior, pool) * p.PrefillAttnPoolNs)
	}
	return d
}

// IdleRead is what a prefill step's chunks pay for the KV idle slots hold (KVIdleSlots): each
// chunk's tokens times idle, at PrefillAttnIdleNs (PrefillAttnPoolNs where that is 0).
func (p *Profile) IdleRead(chunks []int, idle int) time.Duration {
	if idle == 0 || !p.KVIdleSlots {
		return 0
	}
	ns := p.PrefillAttnIdleNs
	if ns == 0 {
		ns = p.PrefillAttnPoolNs
	}
	var tokens int
	for _, c := range chunks {
		tokens += c
	}
	return time.Duration(float64(tokens) * float64(idle) * ns)
}

// PoolPairs is a prefill step's Σ c_i·o_i, the term PrefillAttnPoolNs prices: each chunk's
// tokens times o_i, the KV the other requests hold when it is computed — pool (requests
// without a chunk in the step), every other chunk's request's earlier context, and the chunks
// before it in the step, as the server computes a batch in order.
func PoolPairs(chunks, prior []int, pool int) float64 {
	var priors float64
	for _, v := range prior {
		priors += float64(v)
	}
	var pairs, before float64
	for i, c := range chunks {
		others := float64(pool) + priors - float64(prior[i]) + before
		pairs += float64(c) * others
		before += float64(c)
	}
	return pairs
}

// MixedStep returns the duration of a colocated step that emits a token for each of decoding
// requests holding kvTokens KV tokens and computes prefill chunks (tokens per request) whose
// earlier contexts are prior: the decode step plus the prefill work, one forward pass, in which
// the decoding requests' KV is in the pool beside the chunks'.
func (p *Profile) MixedStep(decoding, kvTokens int, chunks, prior []int) time.Duration {
	d := p.DecodeStep(decoding, kvTokens)
	if len(chunks) > 0 {
		d += p.PrefillStep(chunks, prior, kvTokens)
	}
	return d
}

// DecodeStep returns the duration of one decode step for a batch of running requests holding
// kvTokens tokens in all.
func (p *Profile) DecodeStep(running, kvTokens int) time.Duration {
	d := p.DecodeBase + time.Duration(running)*p.DecodePerSeq +
		time.Duration(float64(kvTokens)*p.DecodePerKVTokenNs+float64(running)*float64(kvTokens)*p.DecodePerSeqKVTokenNs)
	if running >= 2 {
		d += p.DecodeMultiSeq
	}
	return d
}

// Tokens converts a length in agentsim's token estimate to the server's tokens: n ×
// TokenizerRatio, rounded, at least 1 for n > 0.
func (p *Profile) Tokens(n int) int {
	if p.TokenizerRatio == 0 || p.TokenizerRatio == 1 || n == 0 {
		return n
	}
	return max(int(math.Round(float64(n)*p.TokenizerRatio)), 1)
}

// ParallelPrefill returns how long a colocated-parallel request prefills tokens on top of prior
// context already in its KV, with running requests admitted (itself among them): one prefill
// step of its own, times the load, DecodeStep(running, 0) / DecodeStep(1, 0) — the batch slows
// a prefill as much as it slows a decode step.
func (p *Profile) ParallelPrefill(tokens, prior, running int) time.Duration {
	d := p.PrefillStep([]int{tokens}, []int{prior}, 0)
	if running <= 1 {
		return d
	}
	load := float64(p.DecodeStep(running, 0)) / float64(p.DecodeStep(1, 0))
	return time.Duration(float64(d) * load)
}

// TransferService returns how long a request of prompt tokens occupies the transfer thread.
func (p *Profile) TransferService(prompt int) time.Duration {
	return p.TransferSerial + time.Duration(float64(prompt)*p.TransferPerTokenNs)
}
