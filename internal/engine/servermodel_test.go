package engine

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// TestDecodeStepBatchContextTerm checks the unified-KV term: decode_per_seq_kv_token_ns adds
// B·K nanoseconds, and 0 leaves the step as it was.
func TestDecodeStepBatchContextTerm(t *testing.T) {
	p := &Profile{DecodeBase: 10 * time.Millisecond, DecodePerSeq: time.Millisecond, DecodePerKVTokenNs: 10}
	for _, c := range []struct {
		bk       float64 // decode_per_seq_kv_token_ns
		running  int
		kvTokens int
		want     time.Duration
	}{
		// Off: a + b·B + c·K.
		{0, 4, 10_000, 10*time.Millisecond + 4*time.Millisecond + 100*time.Microsecond},
		// On: plus 4 · 10 000 · 2 ns.
		{2, 4, 10_000, 10*time.Millisecond + 4*time.Millisecond + 100*time.Microsecond + 80*time.Microsecond},
		// One sequence: B·K is K.
		{2, 1, 1_000, 10*time.Millisecond + time.Millisecond + 10*time.Microsecond + 2*time.Microsecond},
	} {
		p.DecodePerSeqKVTokenNs = c.bk
		if got := p.DecodeStep(c.running, c.kvTokens); got != c.want {
			t.Errorf("DecodeStep(%d, %d) with decode_per_seq_kv_token_ns %g = %s; want %s", c.running, c.kvTokens, c.bk, got, c.want)
		}
	}
}

// TestTokens checks the tokenizer ratio's conversion of agentsim's estimate.
func TestTokens(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		n     int
		want  int
	}{
		{0, 300, 300},    // unset: the estimate
		{1.34, 300, 402}, // llama-server's tokenizer counting 1.34 tokens per estimated one
		{0.5, 1, 1},      // never below one token
		{1.34, 0, 0},     // nothing stays nothing
	} {
		p := &Profile{TokenizerRatio: c.ratio}
		if got := p.Tokens(c.n); got != c.want {
			t.Errorf("Profile{TokenizerRatio: %g}.Tokens(%d) = %d; want %d", c.ratio, c.n, got, c.want)
		}
	}
}

// TestKVFullFails runs requests whose KV outgrows the pool on a profile with kv_full fail:
// every running request fails mid-stream with llama.cpp's message, none is retracted, and the
// pool is free again afterwards; with the default (retract) the same requests all finish.
func TestKVFullFails(t *testing.T) {
	for _, mode := range []KVFull{KVFullFail, ""} {
		t.Run(string(mode), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := colocatedTestProfile()
				p.KVFull = mode
				p.KVCapacityTokens, p.MaxContextTokens = 1200, 1200
				clk, err := clock.New(1)
				require.NoError(t, err)
				e, err := NewEngine(clk, p, nil)
				require.NoError(t, err)
				e.Start()
				defer e.Stop()
				var wg sync.WaitGroup
				errs := make([]error, 3)
				produced := make([]int, 3)
				for i := range 3 {
					// 3 × (300 + 200) tokens outgrow 1 200 during decode.
					g, err := e.Submit(Job{PromptTokens: 300, MaxTokens: 200, IgnoreEOS: true, Key: uint64(i)})
					require.NoError(t, err)
					wg.Go(func() {
						_, errs[i] = drain(clk, g, clk.Now())
						produced[i] = g.Produced()
					})
				}
				wg.Wait()
				time.Sleep(time.Second)
				s := e.Stats()
				if mode == KVFullFail {
					for i, err := range errs {
						var ab *Aborted
						require.True(t, errors.As(err, &ab), "request %d: err %v; want *Aborted", i, err)
						assert.Equal(t, StageKVFull, ab.Stage)
						assert.Equal(t, ContextExceeded, err.Error())
						assert.Less(t, produced[i], 200, "request %d failed mid-stream", i)
						assert.Greater(t, produced[i], 0, "request %d failed mid-stream", i)
					}
					assert.EqualValues(t, 3, s.KVFailed)
					assert.Zero(t, s.Retracted)
				} else {
					for i, err := range errs {
						assert.NoError(t, err, "request %d", i)
					}
					assert.Positive(t, s.Retracted)
					assert.Zero(t, s.KVFailed)
				}
				assert.Zero(t, s.KVUsedTokens, "KV left in use")
			})
		})
	}
}

// colocatedTestProfile is a small colocated-mixed profile for these tests.
func colocatedTestProfile() *Profile {
	p := mustBuiltin("vllm-llama3-8b-h100")
	p.PrefixCacheTokens = 0
	return p
}
