package simserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// TestTokenizerRatioInUsage checks that a profile's tokenizer_ratio makes usage count the
// prompt in the server's tokens: the estimate times the ratio.
func TestTokenizerRatioInUsage(t *testing.T) {
	prompt := func(ratio float64) int {
		var n int
		bubble(t, func(t *testing.T) {
			p := engine.DSV4PD()
			p.TokenizerRatio = ratio
			ts := startServer(t, simserver.Options{Profile: p})
			resp := ts.post(context.Background(), streamBody(`,"stream_options":{"include_usage":true},"max_tokens":2,"ignore_eos":true`))
			defer resp.Body.Close()
			frames, err := readFrames(ts.clk, resp.Body)
			require.NoError(t, err)
			var u struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(frames[len(frames)-2].data), &u))
			n = u.Usage.PromptTokens
		})
		return n
	}
	est, scaled := prompt(0), prompt(1.5)
	require.Positive(t, est)
	assert.Equal(t, int(float64(est)*1.5+0.5), scaled, "usage.prompt_tokens at ratio 1.5 (the estimate is %d)", est)
}

// TestKVFullOnTheWire checks what a client of a kv_full: fail profile sees when the pool
// overflows mid-stream: the tokens so far, then llama.cpp's error frame, and no [DONE].
func TestKVFullOnTheWire(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.Engine, p.StepTokenBudget, p.KVFull = engine.EngineColocatedMixed, 8192, engine.KVFullFail
		p.BootstrapTimeout, p.WaitingTimeout, p.FirstByte = 0, 0, engine.FirstByteHeaders
		p.KVCapacityTokens, p.MaxContextTokens, p.PrefixCacheTokens = 300, 300, 0
		ts := startServer(t, simserver.Options{Profile: p})
		var wg sync.WaitGroup
		got := make([][]frame, 2)
		for i := range got {
			wg.Go(func() {
				body := fmt.Sprintf(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"request %d"}],"stream":true,"max_tokens":200,"ignore_eos":true}`, i)
				resp := ts.post(context.Background(), body)
				defer resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				got[i], _ = readFrames(ts.clk, resp.Body)
			})
		}
		wg.Wait()
		for i, frames := range got {
			require.NotEmpty(t, frames, "request %d", i)
			last := frames[len(frames)-1].data
			assert.Equal(t, `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`, last, "request %d's last frame", i)
			assert.Greater(t, len(frames), 2, "request %d got tokens before the error", i)
			for _, f := range frames {
				assert.False(t, strings.Contains(f.data, "[DONE]"), "request %d: [DONE] after the error", i)
			}
		}
	})
}
