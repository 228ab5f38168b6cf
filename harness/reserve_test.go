package harness

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
)

// TestMaxTokensBoundsTheReservedOutput: an agent's context check reserves the output a request
// can have, which what is sent as max_tokens bounds: with request.max_tokens (50) below every
// sampled output (64–128), a round whose prompt and max_tokens fit max_context_tokens is sent,
// though its prompt and sampled output would not fit.
func TestMaxTokensBoundsTheReservedOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, dir := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20, overrides: map[string]string{
			"rounds": "1", "request.force_output_length": "false", "request.max_tokens": "50",
			"context.read_tokens": "600", "context.max_context_tokens": "1470"}})
		evs, err := events.ReadFile[events.Event](dir + "/events.jsonl")
		require.NoError(t, err)
		for _, e := range evs {
			assert.NotEqual(t, events.Warning, e.Kind, "no agent stops: %s", e.Message)
			if e.Kind == events.ReadDone {
				// 1415 + 64 > 1470 ≥ 1415 + 50
				require.Equal(t, 1415, e.ContextTokens, "the prompt the case is built on")
			}
		}
		assert.Equal(t, 4, res.Rounds.Completed, "%+v", res.Rounds)
		assert.Zero(t, res.Rounds.NotStarted, "%+v", res.Rounds)
	})
}
