package engine

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parallelProfile is a colocated-parallel profile with llm-d-inference-sim's per-token timing:
// a 20 ms prefill overhead and 100 µs a token, 20 ms a token decoding, twice as slow at 8
// requests as at 1 (its time-factor-under-load 2 over --max-num-seqs 8).
func parallelProfile() *Profile {
	p := Ideal()
	p.Engine, p.MaxRunning = EngineColocatedParallel, 8
	p.PrefillBase, p.PrefillPerToken, p.PrefillChunkTokens = 20*time.Millisecond, 100*time.Microsecond, 2048
	// 1 + (R−1)/7 times 20 ms: 20·6/7 ms + 20/7 ms·R.
	p.DecodeBase, p.DecodePerSeq = 120*time.Millisecond/7, 20*time.Millisecond/7
	return p
}

// TestParallelPrefillsShareNothing: on the colocated-parallel engine prompts sent together
// prefill side by side, each in its own time at the load they make, and a prompt arriving
// while another prefills starts at once; decoding streams go on through a long prefill.
func TestParallelPrefillsShareNothing(t *testing.T) {
	p := parallelProfile()
	require.NoError(t, p.Validate())
	synctest.Test(t, func(t *testing.T) {
		e, clk := startEngine(t, p)

		// Four 2 000-token prompts at once: each 220 ms × (1 + 3/7), none waiting for another.
		start := clk.Now()
		var wg sync.WaitGroup
		ttfts := make([]time.Duration, 4)
		for i := range 4 {
			g, err := e.Submit(Job{PromptTokens: 2000, MaxTokens: 2, IgnoreEOS: true, Key: uint64(i)})
			require.NoError(t, err)
			wg.Go(func() {
				gaps, err := drain(clk, g, start)
				assert.NoError(t, err)
				ttfts[i] = gaps[0]
			})
		}
		wg.Wait()
		want := p.ParallelPrefill(2000, 0, 4)
		assert.InDelta(t, (220 * time.Millisecond * 10 / 7).Seconds(), want.Seconds(), 1e-6, "ParallelPrefill")
		for i, got := range ttfts {
			assert.Equal(t, want, got, "request %d's first token", i)
		}

		// One stream decoding; a long prompt arrives mid-step and another during its prefill.
		start = clk.Now()
		stream, err := e.Submit(Job{PromptTokens: 10, MaxTokens: 200, IgnoreEOS: true, Key: 10})
		require.NoError(t, err)
		var streamGaps []time.Duration
		wg.Go(func() {
			var err error
			streamGaps, err = drain(clk, stream, start)
			assert.NoError(t, err)
		})
		time.Sleep(505 * time.Millisecond)
		at := clk.Now()
		long, err := e.Submit(Job{PromptTokens: 8000, MaxTokens: 1, IgnoreEOS: true, Key: 11})
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		at2 := clk.Now()
		short, err := e.Submit(Job{PromptTokens: 100, MaxTokens: 1, IgnoreEOS: true, Key: 12})
		require.NoError(t, err)
		var shortGaps []time.Duration
		wg.Go(func() {
			var err error
			shortGaps, err = drain(clk, short, at2)
			assert.NoError(t, err)
		})
		longGaps, err := drain(clk, long, at)
		require.NoError(t, err)
		wg.Wait()
		assert.Equal(t, p.ParallelPrefill(8000, 0, 2), longGaps[0], "the long prompt starts as it arrives")
		assert.Equal(t, p.ParallelPrefill(100, 0, 3), shortGaps[0], "the short one does not wait for the long one")
		usual := p.DecodeStep(1, 0)
		for i, g := range streamGaps[1:] {
			assert.Less(t, g, 2*usual, "stream gap %d: decoding goes on through the prefills", i+1)
		}
		s := e.Stats()
		assert.Zero(t, s.PrefillQueued+s.DecodeRunning+s.KVUsedTokens, "all freed")
	})
}
