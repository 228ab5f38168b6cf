//go:build calibrate_full

package calibrate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
)

// TestCalibrateFull is TestCalibrateRecoversTheSimulator at full size (go test -tags
// calibrate_full ./internal/calibrate): three engine kinds, the unified-KV term and a
// tokenizer ratio in the truth, 32 requests at once, prompts to 65 536 tokens, two repeats.
func TestCalibrateFull(t *testing.T) {
	alternating, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	alternating.Engine, alternating.StepTokenBudget, alternating.PrefillChunkTokens = engine.EngineColocatedAlternating, 0, 2048
	alternating.DecodePerKVTokenNs, alternating.DecodePerSeqKVTokenNs, alternating.TokenizerRatio = 5, 1, 1.34
	for name, truth := range map[string]*engine.Profile{"dsv4-pd": engine.DSV4PD(), "alternating-unified-kv": alternating} {
		t.Run(name, func(t *testing.T) {
			_, fit := calibrateSim(t, truth, engine.Ideal(), Options{MaxConcurrency: 32, MaxPrompt: 65536,
				ChunkTokens: truth.PrefillChunkTokens, Repeats: 2, Budget: time.Hour, Seed: 2})
			t.Log(fit.Summary())
			p := fit.Profile
			assert.Equal(t, truth.EngineMode(), p.EngineMode(), "engine")
			within(t, "decode_base", truth.DecodeBase.Seconds(), p.DecodeBase.Seconds(), 0.1)
			within(t, "prefill_per_token", truth.PrefillPerToken.Seconds(), p.PrefillPerToken.Seconds(), 0.1)
			if truth.DecodePerSeqKVTokenNs > 0 {
				within(t, "decode_per_seq_kv_token_ns", truth.DecodePerSeqKVTokenNs, p.DecodePerSeqKVTokenNs, 0.1)
			}
			within(t, "tokenizer_ratio", max(truth.TokenizerRatio, 1), p.TokenizerRatio, 0.01)
			wantE2E, wantTput := benchFigures(t, truth)
			gotE2E, gotTput := benchFigures(t, p)
			within(t, "bench e2e", wantE2E.Seconds(), gotE2E.Seconds(), 0.05)
			within(t, "bench throughput", wantTput, gotTput, 0.05)
		})
	}
}
