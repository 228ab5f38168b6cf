package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// drain reads a generation to its end (or its abort) and returns the simulated gaps between
// its tokens, the first one measured from start.
func drain(clk *clock.Clock, g *Gen, start time.Time) (gaps []time.Duration, err error) {
	last := start
	for {
		n, done, err := g.Next(context.Background(), 1)
		if err != nil {
			return gaps, err
		}
		if n > 0 {
			gaps = append(gaps, clk.Since(last))
			last = clk.Now()
		}
		if done {
			return gaps, nil
		}
	}
}

// spike runs four short streams on the profile, then, once they are decoding, one prompt of
// long tokens, and returns the streams' usual token gap (before the long prompt), their longest
// gap, and how long the long prompt took to its first token.
func spike(t *testing.T, p *Profile, long int) (usual, longest, ttft time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(1)
		require.NoError(t, err)
		e, err := NewEngine(clk, p, nil)
		require.NoError(t, err)
		e.Start()
		defer e.Stop()
		start := clk.Now()
		var mu sync.Mutex
		var all [][]time.Duration
		var wg sync.WaitGroup
		for i := range 4 {
			g, err := e.Submit(Job{PromptTokens: 200, MaxTokens: 3000, IgnoreEOS: true, Key: uint64(i)})
			require.NoError(t, err)
			wg.Go(func() {
				gaps, err := drain(clk, g, start)
				assert.NoError(t, err)
				mu.Lock()
				all = append(all, gaps)
				mu.Unlock()
			})
		}
		for e.Stats().DecodeRunning < 4 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		at := clk.Now()
		g, err := e.Submit(Job{PromptTokens: long, MaxTokens: 1, IgnoreEOS: true, Key: 99})
		require.NoError(t, err)
		_, _, err = g.Next(context.Background(), 1)
		require.NoError(t, err)
		ttft = clk.Since(at)
		wg.Wait()
		for _, gaps := range all {
			usual = max(usual, gaps[10])
			longest = max(longest, slices.Max(gaps[10:]))
		}
	})
	return usual, longest, ttft
}

// TestColocatedITLSpike checks the engines against a 120 k-token prompt arriving while four
// streams decode: on the disaggregated engine the streams keep their step time; on the
// colocated-mixed engine (vLLM V1) every step that carries a prefill chunk stretches, so the
// streams see gaps tens of times their usual one; on the colocated-alternating engine (SGLang
// without mixed chunks) decoding pauses for the whole prefill, one gap as long as the prefill.
func TestColocatedITLSpike(t *testing.T) {
	const long = 120_000

	usual, longest, ttft := spike(t, DSV4PD(), long)
	t.Logf("disaggregated: usual gap %s, longest %s, long prompt's first token after %s", usual, longest, ttft)
	// The steps grow only when the long request joins the batch (1.09 ms + 120 k × 10 ns).
	assert.Less(t, longest, usual*5/4, "disaggregated: a long prefill leaves decode steps alone")

	mixed := mustProfile(t, "vllm-llama3-8b-h100")
	require.Equal(t, EngineColocatedMixed, mixed.EngineMode())
	usual, longest, ttft = spike(t, mixed, long)
	t.Logf("colocated-mixed: usual gap %s, longest %s, long prompt's first token after %s", usual, longest, ttft)
	assert.Greater(t, longest, 50*usual, "colocated-mixed: a step carrying a prefill chunk stretches")
	assert.Less(t, longest, ttft/5, "colocated-mixed: decoding goes on between the chunks")

	alt := mustProfile(t, "vllm-llama3-8b-h100")
	alt.Engine, alt.StepTokenBudget = EngineColocatedAlternating, 0
	usual, longest, ttft = spike(t, alt, long)
	t.Logf("colocated-alternating: usual gap %s, longest %s, long prompt's first token after %s", usual, longest, ttft)
	assert.Greater(t, longest, ttft*9/10, "colocated-alternating: decoding pauses for the whole prefill")
}

// TestColocatedFirstToken: on the colocated-mixed vLLM profile the step that completes a prompt
// emits its first token, so a lone ~250-token prompt's first token comes after one step of
// decode_base plus its prefill, ≈ 14.2 ms (the profile's source measured 14.0 ms).
func TestColocatedFirstToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(1)
		require.NoError(t, err)
		e, err := NewEngine(clk, mustProfile(t, "vllm-llama3-8b-h100"), nil)
		require.NoError(t, err)
		e.Start()
		defer e.Stop()
		start := clk.Now()
		g, err := e.Submit(Job{PromptTokens: 250, MaxTokens: 3, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		gaps, err := drain(clk, g, start)
		require.NoError(t, err)
		assert.InDelta(t, 14.2, gaps[0].Seconds()*1000, 0.1, "first token, ms")
		assert.InDelta(t, 6.5, gaps[1].Seconds()*1000, 0.1, "next token, ms: one decode step")
		s := e.Stats()
		assert.Zero(t, s.PrefillQueued+s.DecodeRunning+s.KVUsedTokens, "all freed")
		assert.Equal(t, int64(1), s.Finished)
	})
}

func mustProfile(t *testing.T, name string) *Profile {
	t.Helper()
	p, err := LookupProfile(name)
	require.NoError(t, err)
	return p
}

// isAborted reports whether err is the engine's abort at stage.
func isAborted(err error, stage Stage) bool {
	var ab *Aborted
	return errors.As(err, &ab) && ab.Stage == stage
}

// TestPoolPairs checks the unified pool's term by hand: each chunk's tokens times the KV the
// other requests hold when it is computed.
func TestPoolPairs(t *testing.T) {
	// Chunk 0 (no earlier context) sees the pool's 1 000 and request 1's 200; chunk 1 (200
	// earlier) sees the pool's 1 000 and chunk 0's 100, computed before it.
	assert.Equal(t, 100*1200.0+50*1100.0, PoolPairs([]int{100, 50}, []int{0, 200}, 1000))
	assert.Zero(t, PoolPairs([]int{4096}, []int{0}, 0), "a lone prompt reads no one else's KV")
	p := &Profile{PrefillBase: time.Millisecond, PrefillAttnPoolNs: 2}
	assert.Equal(t, time.Millisecond+time.Duration(2*500*3000), p.PrefillStep([]int{500}, []int{0}, 3000))
}

// TestUnifiedPoolSlowsPrefill: over a unified KV pool (prefill_attn_pool_ns, llama.cpp's
// --kv-unified) a prompt prefilled beside four decoding streams pays for reading their KV, as
// llama-server's prompt time for 400 tokens grew from 43–48 ms beside six streams of ~300-token
// contexts to 187 ms beside six of ~5 k (docs/engine.md §3); over a paged KV it does not.
func TestUnifiedPoolSlowsPrefill(t *testing.T) {
	paged := mustProfile(t, "vllm-llama3-8b-h100")
	unified := *paged
	unified.PrefillAttnPoolNs = 50
	_, _, fast := spike(t, paged, 500)
	_, _, slow := spike(t, &unified, 500)
	t.Logf("first token of a 500-token prompt beside four decoding streams: paged %s, unified %s", fast, slow)
	// The four streams hold 4 × (200 prompt + their output so far) KV tokens: from 800 to
	// 4 × 3 200 by their end; the prompt is one chunk.
	extra := slow - fast
	assert.GreaterOrEqual(t, extra, time.Duration(50*500*4*200), "at least the streams' prompts are read")
	assert.LessOrEqual(t, extra, time.Duration(50*500*4*3200), "at most all they ever hold")
}

// firstToken is the simulated time from one request's submission to its first token, alone on
// a fresh engine of the profile.
func firstToken(t *testing.T, p *Profile, prompt int) (ttft time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		e, clk := startEngine(t, p)
		at := clk.Now()
		g, err := e.Submit(Job{PromptTokens: prompt, MaxTokens: 4, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		_, _, err = g.Next(context.Background(), 1)
		require.NoError(t, err)
		ttft = clk.Since(at)
	})
	return ttft
}

// TestRequestOverheadDelaysAdmission checks request_overhead and its part per prompt token: a
// request reaches its scheduler that long after it arrives, so its first token comes that much
// later, on a colocated engine and on a disaggregated pair alike.
func TestRequestOverheadDelaysAdmission(t *testing.T) {
	for _, name := range []string{"vllm-llama3-8b-h100", "dsv4-pd"} {
		t.Run(name, func(t *testing.T) {
			p := mustProfile(t, name)
			slow := *p
			slow.RequestOverhead, slow.RequestOverheadPerToken = 2*time.Millisecond, 10*time.Microsecond
			plain, late := firstToken(t, p, 1000), firstToken(t, &slow, 1000)
			t.Logf("first token of a 1 000-token prompt: %s without, %s with 2 ms + 10 µs/token of overhead", plain, late)
			assert.InDelta(t, float64(plain+12*time.Millisecond), float64(late), float64(10*time.Microsecond))
		})
	}
}

// TestRequestOverheadHoldsNothing checks that a request in its overhead holds nothing: one whose
// client leaves then ends aborted without reaching the prefill queue, and the next request,
// behind it on an engine of one slot, runs.
func TestRequestOverheadHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := *mustProfile(t, "vllm-llama3-8b-h100")
		p.RequestOverhead = 50 * time.Millisecond
		p.MaxRunning = 1
		e, clk := startEngine(t, &p)
		start := clk.Now()
		gone, err := e.Submit(Job{PromptTokens: 100, MaxTokens: 4, IgnoreEOS: true, Key: 1})
		require.NoError(t, err)
		e.Cancel(gone)
		g, err := e.Submit(Job{PromptTokens: 100, MaxTokens: 4, IgnoreEOS: true, Key: 2})
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, int64(1), e.Stats().Aborted, "the request whose client left ended")
		assert.Zero(t, e.Stats().PrefillQueued, "and never queued")
		_, err = drain(clk, g, start)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, clk.Since(start), p.RequestOverhead, "the other waited its overhead")
		assert.Equal(t, int64(1), e.Stats().Finished)
	})
}

// TestIdleSlotsStayInThePool checks kv_idle_slots: a finished request's KV stays in the pool,
// where a later prompt's attention reads it at prefill_attn_pool_ns, until its slot is taken —
// by its conversation's next request, which continues it and does not read it as another's,
// or, once the running requests and the idle slots fill max_running, by any request, which
// lets the least recently used one go. Each first token is measured against the same run
// without idle slots: the difference is what the idle slots hold, priced at
// prefill_attn_idle_ns, or at the pool's term where that is 0.
func TestIdleSlotsStayInThePool(t *testing.T) {
	for _, idleNs := range []float64{0, 20} {
		t.Run(fmt.Sprintf("prefill_attn_idle_ns=%g", idleNs), func(t *testing.T) { idleSlotsStay(t, idleNs) })
	}
	bad := *mustProfile(t, "vllm-llama3-8b-h100")
	bad.Engine, bad.KVIdleSlots = EngineColocatedParallel, true
	assert.ErrorContains(t, bad.Validate(), "kv_idle_slots: true is not allowed with engine colocated-parallel")
	bad = *mustProfile(t, "vllm-llama3-8b-h100")
	bad.PrefillAttnIdleNs = 20
	assert.ErrorContains(t, bad.Validate(), "prefill_attn_idle_ns: 20 is read only with kv_idle_slots: true")
}

func idleSlotsStay(t *testing.T, idleNs float64) {
	base := *mustProfile(t, "vllm-llama3-8b-h100")
	base.PrefillAttnPoolNs, base.MaxRunning, base.PrefixCacheTokens = 50, 3, 1<<20
	idle := base
	idle.KVIdleSlots, idle.PrefillAttnIdleNs = true, idleNs
	require.NoError(t, idle.Validate())
	price := cmp.Or(idleNs, base.PrefillAttnPoolNs)
	// B and A finish (holding 800 + 4 and 1 000 + 4); C, fresh, reads both; A's next turn
	// takes A's slot back, though B's is the least recently used, and reads B's and C's (504);
	// D, fresh, finds the three slots taken (B, C, A' idle) and lets B's go, reading C's and
	// A''s (1 304).
	jobs := []Job{
		{PromptTokens: 800, Prefix: []PrefixBlock{{Hash: 2, Tokens: 800}}},
		{PromptTokens: 1000, Prefix: []PrefixBlock{{Hash: 1, Tokens: 1000}}},
		{PromptTokens: 500, Prefix: []PrefixBlock{{Hash: 3, Tokens: 500}}},
		{PromptTokens: 1300, Prefix: []PrefixBlock{{Hash: 1, Tokens: 1000}, {Hash: 11, Tokens: 1300}}},
		{PromptTokens: 200, Prefix: []PrefixBlock{{Hash: 4, Tokens: 200}}},
	}
	plain, kept := inTurn(t, &base, jobs), inTurn(t, &idle, jobs)
	read := []int{0, 804, 804 + 1004, 804 + 504, 504 + 1304} // the idle KV each job's prompt reads
	computed := []int{800, 1000, 500, 300, 200}
	for i := range jobs {
		want := time.Duration(price * float64(computed[i]) * float64(read[i]))
		assert.InDelta(t, float64(want), float64(kept[i]-plain[i]), float64(time.Microsecond),
			"job %d: first token %s with idle slots, %s without", i, kept[i], plain[i])
	}
}

// inTurn runs jobs one after another on a fresh engine of p, each to its end, and returns
// each one's time to its first token.
func inTurn(t *testing.T, p *Profile, jobs []Job) []time.Duration {
	ttfts := make([]time.Duration, len(jobs))
	synctest.Test(t, func(t *testing.T) {
		e, clk := startEngine(t, p)
		for i, j := range jobs {
			j.MaxTokens, j.IgnoreEOS, j.Key = 4, true, uint64(i+1)
			at := clk.Now()
			g, err := e.Submit(j)
			require.NoError(t, err)
			_, _, err = g.Next(context.Background(), 1)
			require.NoError(t, err)
			ttfts[i] = clk.Since(at)
			for done := false; !done; {
				_, done, err = g.Next(context.Background(), 16)
				require.NoError(t, err)
			}
			synctest.Wait()
		}
	})
	return ttfts
}

// TestLaunchHoldsTheLoop checks launch_per_idle_token: four conversations end together, and
// their next turns arrive half a millisecond apart. The first turn's launch deals with the
// other three's slots (104 tokens each, 10 µs a token) and holds the loop meanwhile, so the
// four turns are computed in one step; without it, the first turn is computed alone.
func TestLaunchHoldsTheLoop(t *testing.T) {
	base := *mustProfile(t, "vllm-llama3-8b-h100")
	base.MaxRunning, base.PrefixCacheTokens = 4, 0
	launching := base
	launching.LaunchPerIdleToken = 10 * time.Microsecond
	require.NoError(t, launching.Validate())
	turns := func(p *Profile) []time.Duration {
		firsts := make([]time.Duration, 4)
		synctest.Test(t, func(t *testing.T) {
			e, clk := startEngine(t, p)
			var gens []*Gen
			for i := range 4 {
				g, err := e.Submit(Job{PromptTokens: 100, MaxTokens: 4, IgnoreEOS: true, Key: uint64(i + 1),
					Prefix: []PrefixBlock{{Hash: uint64(i + 1), Tokens: 100}}})
				require.NoError(t, err)
				gens = append(gens, g)
			}
			for _, g := range gens {
				for done := false; !done; {
					var err error
					_, done, err = g.Next(context.Background(), 16)
					require.NoError(t, err)
				}
			}
			synctest.Wait()
			start := clk.Now()
			var wg sync.WaitGroup
			for i := range 4 {
				g, err := e.Submit(Job{PromptTokens: 300, MaxTokens: 4, IgnoreEOS: true, Key: uint64(i + 11),
					Prefix: []PrefixBlock{{Hash: uint64(i + 1), Tokens: 100}, {Hash: uint64(i + 11), Tokens: 300}}})
				require.NoError(t, err)
				wg.Go(func() {
					_, _, err := g.Next(context.Background(), 1)
					assert.NoError(t, err)
					firsts[i] = clk.Since(start)
				})
				time.Sleep(500 * time.Microsecond)
			}
			wg.Wait()
		})
		return firsts
	}
	four := base.MixedStep(0, 0, []int{300, 300, 300, 300}, []int{0, 0, 0, 0})
	held := turns(&launching)
	for i, at := range held {
		assert.InDelta(t, float64(3*104*10*time.Microsecond+four), float64(at), float64(time.Microsecond),
			"turn %d: first token at %s, want the launch (3 slots × 104 tokens × 10µs) and one step of the four turns (%s)", i, at, four)
	}
	alone := turns(&base)
	assert.InDelta(t, float64(base.MixedStep(0, 0, []int{300}, []int{0})), float64(alone[0]), float64(time.Microsecond),
		"without launch work the first turn is computed alone")
	assert.Less(t, alone[0], alone[3])

	bad := base
	bad.Engine, bad.LaunchPerIdleToken = EngineColocatedParallel, time.Microsecond
	assert.ErrorContains(t, bad.Validate(), "launch_per_idle_token: 1µs is not allowed with engine colocated-parallel")
}
