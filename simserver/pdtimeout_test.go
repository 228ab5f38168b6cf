package simserver_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// TestPDWaitingTimeoutOnTheWire checks how the default profile's 300 s waiting timeout
// reaches a client, as SGLang sends it: a stream gets nothing for 300 s, then a 200 whose
// first chunk is the error frame (type INTERNAL_SERVER_ERROR, code 500, SGLang's message)
// and [DONE]; a non-streaming request gets a 500 with the same message. Prefill is slowed to
// 30 s a token so that no KV reaches decode in time.
func TestPDWaitingTimeoutOnTheWire(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.PrefillPerToken = 30 * time.Second
		ts := startServer(t, simserver.Options{Profile: p})

		start := ts.clk.Now()
		resp := ts.post(context.Background(), streamBody(""))
		defer resp.Body.Close()
		assert.Equal(t, 300.0, ts.clk.Since(start).Seconds(), "the head came with the abort")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		require.Len(t, frames, 2, "the error frame, then [DONE]")
		assert.Contains(t, frames[0].data, `{"error":{"object":"error","message":"Decode transfer failed for request rank=0 with exception KVTransferError(bootstrap_room=1): Request 1 timed out after 300.0s in KVPoll.WaitingForInput","type":"INTERNAL_SERVER_ERROR","param":null,"code":500}}`)
		assert.Equal(t, "[DONE]", frames[1].data)

		resp = ts.post(context.Background(), `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}]}`)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		assert.Contains(t, string(body), "timed out after 300.0s in KVPoll.WaitingForInput")
		ts.wait(10 * time.Minute) // the prefill step in progress ends, and with it the request
		assert.Equal(t, 2.0, ts.gaugeValue("sglang:num_transfer_failed_reqs_total", "engine_type", "decode"))
		assert.Equal(t, 0.0, ts.gaugeValue("sglang:num_bootstrap_failed_reqs_total", "engine_type", "prefill"))
		assert.Zero(t, ts.Engine().Stats().KVUsedTokens, "the reserved KV is freed")
	})
}

// TestRetractCrashOnTheWire: once the retract-crash fault has killed the scheduler, every
// later request gets a 503 before any stream starts.
func TestRetractCrashOnTheWire(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.KVCapacityTokens = p.MaxContextTokens
		faults, err := engine.ParseFaults([]string{"retract-crash"}, nil, 1)
		require.NoError(t, err)
		ts := startServer(t, simserver.Options{Profile: p, Faults: faults})
		for i := range 2 { // two 80 k-token contexts overflow the KV as they grow
			_, err := ts.Engine().Submit(engine.Job{PromptTokens: 80_000, MaxTokens: 3000, IgnoreEOS: true, Key: uint64(i)})
			require.NoError(t, err)
		}
		ts.wait(5 * time.Minute)
		require.True(t, ts.Engine().Stats().Crashed)

		resp := ts.post(context.Background(), streamBody(""))
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Contains(t, string(body), "its scheduler has died")
	})
}
