package engine

import (
	"fmt"
	"sort"
	"time"
)

// Profile holds the parameters of the engine model. All durations are simulated time.
//
// The model is a prefill/decode-disaggregated pair of engines:
//
// Prefill engine (chunked prefill). Each step takes up to PrefillChunkTokens uncached prompt
// tokens from the queue, first come first served, splitting long prompts across steps. A step
// that computes chunks c_i of requests whose earlier context (cached prefix plus chunks already
// computed) is p_i takes
//
//	t_prefill = PrefillBase + PrefillPerToken·Σc_i + PrefillAttnPerToken2Ns·Σ c_i·(p_i + c_i/2)
//
// — linear work per token plus attention over the context before it. Tokens found in the prefix
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
//	t_decode = DecodeBase + DecodePerSeq·B + DecodePerKVTokenNs·K
//
// with B the running batch and K the total KV tokens (context plus output so far) in it, so long
// contexts slow every request in the batch. A request is admitted only while its context fits
// in KVCapacityTokens; when growth overflows the capacity, the newest requests are retracted
// (their KV freed) and requeued at the front.
//
// Server gauges in the SGLang names refresh the way SGLang's do: prefill gauges on each
// prefill batch, decode gauges every DecodeLogInterval decode steps (and once when decode goes
// idle); the plain decode_running / prefill_inflight gauges are live.
type Profile struct {
	// Name is the profile's name, as --profile takes it.
	Name string
	// Model is the model name /v1/models lists and the metrics label.
	Model string
	// Description says, in one line, what stack the profile models.
	Description string

	// PrefillBase is the fixed cost of a prefill step, simulated time.
	PrefillBase time.Duration
	// PrefillPerToken is the cost of each uncached prompt token computed, simulated time.
	PrefillPerToken time.Duration
	// PrefillAttnPerToken2Ns is the attention cost in nanoseconds per (token × context token).
	PrefillAttnPerToken2Ns float64
	// PrefillChunkTokens is the most prompt tokens one prefill step computes.
	PrefillChunkTokens int
	// PrefixCacheTokens is the prefix cache's capacity, in tokens.
	PrefixCacheTokens int

	// TransferSerial is the transfer thread's fixed cost per request, simulated time.
	TransferSerial time.Duration
	// TransferPerTokenNs is the transfer thread's cost in nanoseconds per prompt token.
	TransferPerTokenNs float64
	// TransferLatency is the time from the end of the handshake until the decode engine has
	// the KV, simulated time.
	TransferLatency time.Duration

	// DecodeBase is the fixed cost of a decode step, simulated time; it must be > 0.
	DecodeBase time.Duration
	// DecodePerSeq is the cost of each running request in a decode step, simulated time.
	DecodePerSeq time.Duration
	// DecodePerKVTokenNs is the decode step's cost in nanoseconds per KV token in the batch.
	DecodePerKVTokenNs float64
	// MaxRunning is the decode batch limit, in requests.
	MaxRunning int
	// KVCapacityTokens is the decode engine's KV capacity, in tokens.
	KVCapacityTokens int
	// DecodeLogInterval is how many decode steps pass between refreshes of the SGLang-named
	// decode gauges.
	DecodeLogInterval int

	// MaxContextTokens is the longest prompt plus output a request may have, in tokens.
	MaxContextTokens int
	// Efforts gives the output length, when the client does not force it, per
	// reasoning_effort ("" for requests without one).
	Efforts map[string]LengthProfile
}

// LengthProfile is the natural output length of a request: uniform in [Min, Max] tokens, of
// which ReasoningFraction are reasoning tokens when reasoning is on.
type LengthProfile struct {
	// Min and Max bound the output length, in tokens.
	Min, Max int
	// ReasoningFraction is the share of the output that is reasoning, from 0 to below 1.
	ReasoningFraction float64
}

// PrefillStep returns the duration of one prefill step over chunks (tokens computed per request)
// whose earlier contexts are prior.
func (p *Profile) PrefillStep(chunks, prior []int) time.Duration {
	var tokens, attn float64
	for i, c := range chunks {
		tokens += float64(c)
		attn += float64(c) * (float64(prior[i]) + float64(c)/2)
	}
	return p.PrefillBase + time.Duration(tokens*float64(p.PrefillPerToken)+attn*p.PrefillAttnPerToken2Ns)
}

// DecodeStep returns the duration of one decode step for a batch of running requests holding
// kvTokens tokens in all.
func (p *Profile) DecodeStep(running, kvTokens int) time.Duration {
	return p.DecodeBase + time.Duration(running)*p.DecodePerSeq +
		time.Duration(float64(kvTokens)*p.DecodePerKVTokenNs)
}

// TransferService returns how long a request of prompt tokens occupies the transfer thread.
func (p *Profile) TransferService(prompt int) time.Duration {
	return p.TransferSerial + time.Duration(float64(prompt)*p.TransferPerTokenNs)
}

// Validate reports whether every parameter is in range.
func (p *Profile) Validate() error {
	var bad []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	check(p.PrefillBase >= 0 && p.PrefillPerToken >= 0 && p.PrefillAttnPerToken2Ns >= 0, "prefill costs must be ≥ 0")
	check(p.PrefillChunkTokens >= 1, "prefill chunk must be ≥ 1 token, got %d", p.PrefillChunkTokens)
	check(p.DecodeBase > 0 && p.DecodePerSeq >= 0 && p.DecodePerKVTokenNs >= 0, "decode costs must be ≥ 0 with a positive base")
	check(p.MaxRunning >= 1, "max_running must be ≥ 1, got %d", p.MaxRunning)
	check(p.KVCapacityTokens >= p.MaxContextTokens, "KV capacity %d tokens must hold one full context of %d tokens", p.KVCapacityTokens, p.MaxContextTokens)
	check(p.DecodeLogInterval >= 1, "decode log interval must be ≥ 1 step")
	for effort, l := range p.Efforts {
		check(l.Min >= 1 && l.Max >= l.Min && l.ReasoningFraction >= 0 && l.ReasoningFraction < 1,
			"output lengths for effort %q must satisfy 1 ≤ min ≤ max and 0 ≤ reasoning fraction < 1", effort)
	}
	if len(bad) > 0 {
		return fmt.Errorf("profile %s: %v", p.Name, bad)
	}
	return nil
}

// DSV4PD is the default profile, calibrated to the incident's DeepSeek-V4-Flash prefill/decode
// deployment (docs/engine.md §5 and §6):
//
//   - decode: DecodeBase 9.2 ms + DecodePerSeq 1.09 ms per running request +
//     DecodePerKVTokenNs 10 ns per KV token — 806 tok/s at 64 concurrent and 835 tok/s at 96
//     with ~200-token prompts (TestPureDecodeThroughput; the incident: 812 and 845); 30 agents
//     with ~20 k-token contexts step in ≈ 48 ms, ≈ 21 tok/s each, so 3 000–4 500 output tokens
//     take 150–210 s (ocbrowse --rounds 2 measures a mean of 174 s, TPOT 44 ms);
//   - prefill: 20 ms + 80 µs per uncached token + 1 ns per token × context token, chunks of
//     8 192 tokens: a 3 000-token batch of short prompts takes ≈ 0.26 s, a 10 k-token uncached
//     suffix on a 30 k-token context ≈ 1.2 s;
//   - KV transfer: a 70 ms handshake served one request at a time (+ 5 ns per token), then
//     1.1 s until the decode engine has the KV — 16 concurrent short requests reach decode
//     spread over ≈ 1.1 s, the first ≈ 1.2 s after it was sent;
//
// which makes the decisive batching test (16 × 128 tokens, ~200-token prompts) finish in
// ≈ 5.3–5.45 s with lat_min ≈ 3.7–4.2 s and lat_mean ≈ 4.9–5.0 s, whether the first request
// reaches the prefill engine alone or all sixteen arrive together (the incident: 5.4 s,
// 3.9 s, 5.1 s).
func DSV4PD() *Profile {
	return &Profile{
		Name:        "dsv4-pd",
		Model:       "deepseek-v4-flash",
		Description: "DeepSeek-V4-Flash on SGLang with prefill/decode disaggregation (the incident's stack)",

		PrefillBase:            20 * time.Millisecond,
		PrefillPerToken:        80 * time.Microsecond,
		PrefillAttnPerToken2Ns: 1,
		PrefillChunkTokens:     8192,
		PrefixCacheTokens:      4 << 20,

		TransferSerial:     70 * time.Millisecond,
		TransferPerTokenNs: 5,
		TransferLatency:    1100 * time.Millisecond,

		DecodeBase:         9200 * time.Microsecond,
		DecodePerSeq:       1090 * time.Microsecond,
		DecodePerKVTokenNs: 10,
		MaxRunning:         128,
		KVCapacityTokens:   1_500_000,
		DecodeLogInterval:  40,

		MaxContextTokens: 163_840,
		Efforts: map[string]LengthProfile{
			"":        {Min: 200, Max: 800},
			"none":    {Min: 200, Max: 800},
			"minimal": {Min: 150, Max: 600, ReasoningFraction: 0.2},
			"low":     {Min: 400, Max: 1200, ReasoningFraction: 0.5},
			"medium":  {Min: 1000, Max: 2500, ReasoningFraction: 0.7},
			"high":    {Min: 2000, Max: 3500, ReasoningFraction: 0.8},
			"max":     {Min: 3000, Max: 4500, ReasoningFraction: 0.8},
		},
	}
}

// profiles is the registry of built-in profiles by name.
var profiles = map[string]func() *Profile{
	"dsv4-pd": DSV4PD,
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns a fresh copy of the named built-in profile.
func LookupProfile(name string) (*Profile, error) {
	f, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q: want one of %v", name, ProfileNames())
	}
	return f(), nil
}
