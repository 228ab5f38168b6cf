package calibrate

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// calibrateSim runs the experiments against an embedded simulator of the truth profile, in
// virtual time, and fits them from base.
func calibrateSim(t *testing.T, truth, base *engine.Profile, o Options) (*Data, *Fit) {
	var d *Data
	var fit *Fit
	synctest.Test(t, func(t *testing.T) {
		s := simtest.NewLocalServer(t, simserver.Options{Profile: truth})
		o.Client = &Client{URL: s.URL, Model: truth.Model, HTTP: s.Client(), Clock: s.Clock()}
		if o.Out == nil && testing.Verbose() {
			o.Out = os.Stdout
		}
		var err error
		d, err = Run(context.Background(), o)
		require.NoError(t, err)
		fit = FitData(d, base, o.ChunkTokens)
	})
	return d, fit
}

// benchFigures runs bench's default test against a simulator of the profile, in virtual
// time: 16 requests at once of a 200-token prompt and 128 output tokens. It returns their mean
// e2e latency and the output throughput, tokens per second.
func benchFigures(t *testing.T, p *engine.Profile) (e2e time.Duration, tokPerS float64) {
	synctest.Test(t, func(t *testing.T) {
		s := simtest.NewLocalServer(t, simserver.Options{Profile: p})
		r := &runner{o: Options{Client: &Client{URL: s.URL, Model: p.Model, HTTP: s.Client(), Clock: s.Clock()}, Seed: 7}}
		start := s.Clock().Now()
		obs := r.batchOf(context.Background(), 16, 200, 128)
		wall := s.Clock().Since(start)
		tokens := 0
		for _, o := range obs {
			require.True(t, o.OK(), o.Err)
			e2e += o.Done.Sub(o.Start) / 16
			tokens += o.Tokens()
		}
		tokPerS = float64(tokens) / wall.Seconds()
	})
	return e2e, tokPerS
}

// within asserts that got is within tol (relative) of want.
func within(t *testing.T, what string, want, got, tol float64) {
	t.Helper()
	assert.InEpsilon(t, want, got, tol, "%s: fitted %g, truth %g", what, got, want)
}

// TestCalibrateRecoversTheSimulator calibrates against the simulator itself, a known truth: a
// disaggregated profile (dsv4-pd) and a colocated one (vllm-llama3-8b-h100), each from a base
// that knows none of its figures (ideal). The decode and prefill terms must come back within
// 10 %, the engine kind exactly, and bench's figures on the twin within 5 % of the truth's.
func TestCalibrateRecoversTheSimulator(t *testing.T) {
	for _, name := range []string{"dsv4-pd", "vllm-llama3-8b-h100"} {
		t.Run(name, func(t *testing.T) {
			truth, err := engine.LookupProfile(name)
			require.NoError(t, err)
			d, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 16, MaxPrompt: 32768,
				ChunkTokens: truth.PrefillChunkTokens, Repeats: 1, Budget: time.Hour, Seed: 1})
			t.Log(fit.Summary())
			assert.Len(t, d.References, referencesPlanned)
			assert.Contains(t, fit.Speed, "the server held its speed within 15 %", "the simulator's speed does not move")
			p := fit.Profile
			assert.Equal(t, truth.EngineMode(), p.EngineMode(), "engine")
			within(t, "decode_base", truth.DecodeBase.Seconds(), p.DecodeBase.Seconds(), 0.1)
			within(t, "decode_per_seq", truth.DecodePerSeq.Seconds(), p.DecodePerSeq.Seconds(), 0.1)
			within(t, "decode_per_kv_token_ns", truth.DecodePerKVTokenNs, p.DecodePerKVTokenNs, 0.1)
			within(t, "prefill_per_token", truth.PrefillPerToken.Seconds(), p.PrefillPerToken.Seconds(), 0.1)
			within(t, "prefill_attn_per_token2_ns", truth.PrefillAttnPerToken2Ns, p.PrefillAttnPerToken2Ns, 0.1)
			assert.InDelta(t, 1, p.TokenizerRatio, 0.001, "tokenizer_ratio")
			wantE2E, wantTput := benchFigures(t, truth)
			gotE2E, gotTput := benchFigures(t, p)
			t.Logf("bench: e2e %s on the truth, %s on the twin; %.0f and %.0f tok/s", wantE2E, gotE2E, wantTput, gotTput)
			within(t, "bench e2e", wantE2E.Seconds(), gotE2E.Seconds(), 0.05)
			within(t, "bench throughput", wantTput, gotTput, 0.05)
		})
	}
}

// TestCalibrateRefusingServer calibrates against a server that refuses prompts beyond 4 096
// tokens and fails a tenth of its streams partway: calibrate still writes a valid profile,
// with what it could fit, and names what it skipped and why.
func TestCalibrateRefusingServer(t *testing.T) {
	truth := engine.Ideal()
	truth.Engine, truth.StepTokenBudget, truth.PrefillChunkTokens = engine.EngineColocatedMixed, 2048, 2048
	truth.DecodePerSeq, truth.PrefillPerToken = time.Millisecond, 50*time.Microsecond
	truth.MaxContextTokens = 4096
	var d *Data
	var fit *Fit
	synctest.Test(t, func(t *testing.T) {
		faults, err := engine.ParseFaults([]string{"errors"}, []string{"rate=0.1", "kind=frame"}, 1)
		require.NoError(t, err)
		s := simtest.NewLocalServer(t, simserver.Options{Profile: truth, Faults: faults})
		o := Options{Client: &Client{URL: s.URL, Model: truth.Model, HTTP: s.Client(), Clock: s.Clock()},
			MaxConcurrency: 8, MaxPrompt: 16384, ChunkTokens: 2048, Repeats: 2, Budget: time.Hour, Seed: 3}
		d, err = Run(context.Background(), o)
		require.NoError(t, err)
		fit = FitData(d, engine.Ideal(), 2048)
	})
	t.Log(fit.Summary())
	require.NoError(t, fit.Profile.Validate())
	assert.NotEmpty(t, d.Skipped[ExpPrompt], "the refused prompt lengths are named")
	assert.True(t, slices.ContainsFunc(d.Skipped[ExpPrompt], func(s string) bool { return strings.Contains(s, "maximum context length") }), "the refusal's reason: %q", d.Skipped[ExpPrompt])
	within(t, "decode_per_seq", truth.DecodePerSeq.Seconds(), fit.Profile.DecodePerSeq.Seconds(), 0.1)
	assert.LessOrEqual(t, fit.Profile.MaxContextTokens, 4096, "max_context_tokens from the refusals")
	y, err := fit.YAML(d, "ideal")
	require.NoError(t, err)
	_, err = engine.ParseProfile(y, "calibrated")
	require.NoError(t, err, "the written profile reads back:\n%s", y)
}

// TestCalibrateTellsParallelPrefill calibrates against a colocated-parallel truth with
// llm-d-inference-sim's per-token timing (a 20 ms prefill overhead, 100 µs a token, 20 ms a
// token decoding, twice as slow at its 8 slots): decoding goes on through a prefill, as on a
// disaggregated server, but prompts sent together are not prefilled one after another, so the
// fit must choose colocated-parallel, and recover the prefill and decode terms within 10 %.
func TestCalibrateTellsParallelPrefill(t *testing.T) {
	truth := engine.Ideal()
	truth.Engine, truth.MaxRunning = engine.EngineColocatedParallel, 8
	truth.PrefillBase, truth.PrefillPerToken, truth.PrefillChunkTokens = 20*time.Millisecond, 100*time.Microsecond, 8192
	truth.DecodeBase, truth.DecodePerSeq = 120*time.Millisecond/7, 20*time.Millisecond/7
	_, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 16, MaxPrompt: 8192,
		ChunkTokens: 8192, Repeats: 1, Budget: time.Hour, Seed: 1})
	t.Log(fit.Summary())
	p := fit.Profile
	assert.Equal(t, engine.EngineColocatedParallel, p.EngineMode(), "engine; evidence: %s", fit.Evidence)
	assert.Equal(t, 8, p.MaxRunning, "max_running")
	within(t, "decode_base", truth.DecodeBase.Seconds(), p.DecodeBase.Seconds(), 0.1)
	within(t, "decode_per_seq", truth.DecodePerSeq.Seconds(), p.DecodePerSeq.Seconds(), 0.1)
	within(t, "prefill_base", truth.PrefillBase.Seconds(), p.PrefillBase.Seconds(), 0.1)
	within(t, "prefill_per_token", truth.PrefillPerToken.Seconds(), p.PrefillPerToken.Seconds(), 0.1)
}

// TestCalibrateSizesThePrefixCache calibrates against a colocated truth whose prefix cache
// holds 20 000 tokens: the prefix-size probe must bracket it within one of its 2 048-token
// prompts, so the fitted size is within 6 %.
func TestCalibrateSizesThePrefixCache(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	truth.PrefixCacheTokens = 20000
	var out strings.Builder
	d, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 8192,
		ChunkTokens: truth.PrefillChunkTokens, Repeats: 1, Budget: time.Hour, Seed: 1, Out: &out})
	t.Log(out.String())
	t.Log(fit.Summary())
	// The probe's fills are one point of the plan: the progress count never passes its total.
	for _, m := range regexp.MustCompile(`(?m)^\[(\d+)/(\d+)\]`).FindAllStringSubmatch(out.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		assert.LessOrEqual(t, n, total, "progress %s", m[0])
	}
	lo, hi, ok := sizeBounds(d, 1)
	require.True(t, ok, "the prefix-size probe ran")
	assert.LessOrEqual(t, lo, 20000.0, "lower bound")
	assert.Greater(t, hi, 20000.0, "upper bound")
	assert.LessOrEqual(t, hi-lo, 2100.0, "bracketed within one prompt")
	within(t, "prefix_cache_tokens", 20000, float64(fit.Profile.PrefixCacheTokens), 0.06)
}

// TestCalibrateFindsTheUnifiedPool calibrates against a colocated truth whose prompts pay for
// reading the other requests' KV in a unified pool (prefill_attn_pool_ns, llama.cpp's
// --kv-unified): the context experiment's batches must recover it within 10 %, and a twin
// without it would be too fast on them (TestCalibrateRecoversTheSimulator fits 0 on a paged
// truth).
func TestCalibrateFindsTheUnifiedPool(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	truth.PrefillAttnPoolNs = 0.5
	d, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 16384,
		ChunkTokens: truth.PrefillChunkTokens, Repeats: 1, Budget: time.Hour, Seed: 1})
	t.Log(fit.Summary())
	within(t, "prefill_attn_pool_ns", truth.PrefillAttnPoolNs, fit.Profile.PrefillAttnPoolNs, 0.1)
	within(t, "prefill_attn_per_token2_ns", truth.PrefillAttnPerToken2Ns, fit.Profile.PrefillAttnPerToken2Ns, 0.1)
	paged := *fit.Profile
	paged.PrefillAttnPoolNs = 0
	m := d.Of(ExpContext)[len(d.Of(ExpContext))-1]
	prompts := make([]int, m.Point.Batch)
	for i, o := range m.Runs[0] {
		prompts[i] = o.PromptTokens
	}
	withPool, _ := batchFirstTokens(fit.Profile, prompts)
	without, _ := batchFirstTokens(&paged, prompts)
	t.Logf("%s: the last first token after %s with the pool's term, %s without", m.Point, withPool, without)
	assert.Greater(t, withPool, without*11/10, "the term matters on the largest batch")
	assert.Contains(t, strings.Join(paramSources(fit), "\n"), "kv_idle_slots: 2 turns after streams that had ended", "decided from the turns, not kept")
	assert.False(t, fit.Profile.KVIdleSlots, "the truth keeps no idle slots' KV")
}

// TestCalibrateFindsIdleSlots calibrates against a colocated truth whose unified pool keeps
// finished requests' KV in their slots (kv_idle_slots): the turn-after probe must find it,
// from TTFTs (the simulator reports no prompt time of its own), and the pool term must still
// come back.
func TestCalibrateFindsIdleSlots(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	truth.PrefillAttnPoolNs, truth.KVIdleSlots, truth.MaxRunning = 5, true, 8 // eight slots, as llama-server -np 8
	_, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 16384,
		ChunkTokens: truth.PrefillChunkTokens, Repeats: 1, Budget: time.Hour, Seed: 1})
	t.Log(fit.Summary())
	assert.True(t, fit.Profile.KVIdleSlots)
	within(t, "prefill_attn_pool_ns", truth.PrefillAttnPoolNs, fit.Profile.PrefillAttnPoolNs, 0.2)
}

// TestCalibrateFindsTheMultiSeqStep calibrates against a colocated truth whose decode step of
// two or more requests costs 1.5 ms more than the line through one request's (decode_multi_seq,
// a CPU backend's batched kernels): the fit must find it beside the other decode terms, and
// the twin's step at one request and at eight must be the truth's within 3 %.
func TestCalibrateFindsTheMultiSeqStep(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	truth.DecodeMultiSeq, truth.MaxRunning = 1500*time.Microsecond, 8
	_, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 8192,
		ChunkTokens: truth.PrefillChunkTokens, Repeats: 1, Budget: time.Hour, Seed: 1})
	t.Log(fit.Summary())
	within(t, "decode_multi_seq", truth.DecodeMultiSeq.Seconds(), fit.Profile.DecodeMultiSeq.Seconds(), 0.1)
	for _, b := range []int{1, 8} {
		within(t, fmt.Sprintf("decode step at %d × 1 000 tokens", b), truth.DecodeStep(b, 1000*b).Seconds(), fit.Profile.DecodeStep(b, 1000*b).Seconds(), 0.03)
	}
}

// TestCalibrateFindsAFailingPool calibrates against a colocated truth whose KV pool of 33 000
// tokens fails every running request mid-stream when it fills (kv_full: fail, llama.cpp's
// "Context size has been exceeded."): the context batches whose prompts fit but whose outputs
// outgrow the pool (4 × 8 192, 8 × 4 096) fail whole, and the fit must still read kv_full and
// the pool's size from them.
func TestCalibrateFindsAFailingPool(t *testing.T) {
	truth := engine.Ideal()
	truth.Engine, truth.StepTokenBudget, truth.PrefillChunkTokens = engine.EngineColocatedMixed, 2048, 2048
	truth.DecodePerSeq, truth.PrefillPerToken = time.Millisecond, 50*time.Microsecond
	truth.KVFull, truth.KVCapacityTokens, truth.MaxRunning, truth.MaxContextTokens = engine.KVFullFail, 33000, 8, 33000
	d, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 16384,
		ChunkTokens: 2048, Repeats: 1, Budget: time.Hour, Seed: 1})
	t.Log(fit.Summary())
	assert.NotEmpty(t, d.Refused, "a context batch failed whole")
	assert.Equal(t, engine.KVFullFail, fit.Profile.KVFull, "kv_full")
	within(t, "kv_capacity_tokens", 33000, float64(fit.Profile.KVCapacityTokens), 0.1)
}

// TestHeldAtOnce: the KV probe's lower bound counts only the requests decoding together; a
// server that queued one behind the other for KV held one at a time.
func TestHeldAtOnce(t *testing.T) {
	at := func(ms ...int) []time.Time {
		var v []time.Time
		for _, m := range ms {
			v = append(v, time.Unix(0, 0).Add(time.Duration(m)*time.Millisecond))
		}
		return v
	}
	a := Obs{PromptTokens: 1000, Chunks: at(10, 20, 30)}
	b := Obs{PromptTokens: 2000, Chunks: at(40, 50)}
	assert.Equal(t, 2002.0, heldAtOnce([]Obs{a, b}, 1), "one after the other: the larger alone")
	c := Obs{PromptTokens: 500, Chunks: at(15, 25, 35)}
	assert.Equal(t, 1000+3+500.0+2, heldAtOnce([]Obs{a, c}, 1), "together: at a's last chunk, a's 3 and c's 2 so far")
}

// TestCalibrateMeasuresTheChunk calibrates a colocated-mixed truth that prefills 2 048 tokens a
// step (llama.cpp's default --batch-size) with --chunk-tokens left at 8 192: the interference
// probe's decoding streams see the long prompt go through in eight stretched steps, so the fit
// takes 2 048, and the terms fitted with it come back within 10 %.
func TestCalibrateMeasuresTheChunk(t *testing.T) {
	truth := chunkedBy2048(t)
	_, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 16384,
		ChunkTokens: 8192, Repeats: 1, Budget: time.Hour, Seed: 1})
	t.Log(fit.Summary())
	p := fit.Profile
	assert.Equal(t, 2048, p.PrefillChunkTokens, "prefill_chunk_tokens; evidence: %s", fit.Evidence)
	assert.Equal(t, 2048, p.StepTokenBudget, "step_token_budget")
	within(t, "prefill_per_token", truth.PrefillPerToken.Seconds(), p.PrefillPerToken.Seconds(), 0.1)
	within(t, "prefill_attn_per_token2_ns", truth.PrefillAttnPerToken2Ns, p.PrefillAttnPerToken2Ns, 0.1)
	within(t, "decode_base", truth.DecodeBase.Seconds(), p.DecodeBase.Seconds(), 0.1)
}

// TestChunkKeptSaysWhy: where the interference runs cannot measure the chunk — no run saw three
// stretched steps, or the runs that did disagree — the given chunk is kept and the profile says
// why, with each run's count; where the runs that saw three or more agree, it is fitted, and a
// run that saw fewer is named as set aside.
func TestChunkKeptSaysWhy(t *testing.T) {
	for _, c := range []struct {
		stretched []int
		want      int
		says      string // kept, or the fitted source
	}{
		{[]int{2, 1}, 8192, "prefill_chunk_tokens: the interference probe's decoding streams saw the long prompt go through in 2 steps for 16389 tokens, 1 steps for 16389 tokens: fewer than three stretched steps in a run say little of the chunk, 8192 (--chunk-tokens or the base's) kept"},
		{[]int{8, 4}, 8192, "prefill_chunk_tokens: the interference runs disagree (8 steps for 16389 tokens, 4 steps for 16389 tokens): 8192 (--chunk-tokens or the base's) kept"},
		{[]int{8, 7}, 2048, "prefill_chunk_tokens: interference probe: the decoding streams saw the long prompt go through in 8 steps for 16389 tokens, 7 steps for 16389 tokens; the nearest power of two (--chunk-tokens or the base gave 8192)"},
		{[]int{8, 2}, 2048, "prefill_chunk_tokens: interference probe: the decoding streams saw the long prompt go through in 8 steps for 16389 tokens, 2 steps for 16389 tokens; the nearest power of two, from the runs that saw three steps or more (2 steps for 16389 tokens set aside)"},
	} {
		var runs []kindRatio
		for _, n := range c.stretched {
			runs = append(runs, kindRatio{long: 16389, stretched: n})
		}
		f := &Fit{Profile: engine.Ideal()}
		assert.Equal(t, c.want, f.chunkOf(runs, 8192), "%v", c.stretched)
		if c.want == 8192 {
			assert.Contains(t, f.Kept, c.says)
		} else {
			assert.Empty(t, f.Kept)
			assert.Contains(t, strings.Join(paramSources(f), "\n"), c.says)
		}
	}
}

// TestKVFailureWhilePrefilling: llama-server failed a batch of 8 prompts of 8 k tokens when
// the fourth did not fit its pool; the three decoding held their prompts and tokens, the one
// prefilling part of its prompt, so the pool is between them and that prompt more.
func TestKVFailureWhilePrefilling(t *testing.T) {
	t0 := time.Unix(0, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	failed := engine.ContextExceeded
	run := []Obs{
		{PromptTokens: 8000, Chunks: []time.Time{ms(10), ms(20)}, Done: ms(50), Err: "in stream: " + failed, MidStream: true},
		{PromptTokens: 8000, Chunks: []time.Time{ms(30)}, Done: ms(50), Err: "in stream: " + failed, MidStream: true},
		{PromptTokens: 8000, Chunks: []time.Time{ms(40)}, Done: ms(50), Err: "in stream: " + failed, MidStream: true},
		{Request: Request{Estimate: 8000}, Done: ms(50), Err: "500: " + failed},
	}
	f := &Fit{Profile: engine.Ideal()}
	require.True(t, f.kv(&Data{Refused: []Measured{{Point: Point{Exp: ExpKV, Batch: 4, Prompt: 8000}, Runs: [][]Obs{run}}}}, 1))
	assert.Equal(t, engine.KVFullFail, f.Profile.KVFull)
	// 3 × 8 000 + 4 tokens decoded, and half of the 8 000 the fourth was prefilling.
	assert.Equal(t, 24004+4000, f.Profile.KVCapacityTokens)
}

// TestCalibrateOneChunkProbe calibrates a colocated-mixed truth of 2 048-token chunks whose
// longest prompt is barely over a chunk (--max-prompt 2080, as a server that refused longer
// ones): its first chunk is nearly all the prefill, which stalls the decoding streams as long as
// an alternating engine's would, so the probe cannot tell the two apart and says so, and the fit
// keeps colocated-mixed rather than taking the stall for alternating.
func TestCalibrateOneChunkProbe(t *testing.T) {
	truth := chunkedBy2048(t)
	_, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 8, MaxPrompt: 2080,
		ChunkTokens: 2048, Repeats: 1, Budget: time.Hour, Seed: 1})
	assert.Equal(t, engine.EngineColocatedMixed, fit.Profile.EngineMode(), "engine; evidence: %s", fit.Evidence)
	assert.Contains(t, fit.Evidence, "cannot tell them apart")
}

// chunkedBy2048 is the colocated-mixed vLLM profile prefilling 2 048 tokens a step, as
// llama.cpp's server does by default (--batch-size).
func chunkedBy2048(t *testing.T) *engine.Profile {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	truth.PrefillChunkTokens, truth.StepTokenBudget = 2048, 2048
	return truth
}
