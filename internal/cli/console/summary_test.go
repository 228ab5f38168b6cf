package console

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/results"
)

// TestSummaryCounts checks that the summary's counts read as English and carry their units:
// one of a thing is singular, token counts say tokens.
func TestSummaryCounts(t *testing.T) {
	for _, tc := range []struct {
		r    results.Results
		want []string
	}{
		// One of each.
		{results.Results{Requests: results.Requests{Sent: 2, OK: 1, Errors: 1, Timeouts: 1, Retries: 1},
			Tokens:  results.Tokens{Prompt: 1, Reasoning: 1, Content: 1},
			Harness: &results.Harness{Lag: results.LagSummary{N: 1}}},
			[]string{"2 sent: 1 ok, 1 error, 1 timeout, 0 cancelled, 0 in flight; 1 retry, 0 stalled",
				"prompt 1 token (0 cached), reasoning 1 token, content 1 token", "(simulated, over 1 wait)"}},
		// Several.
		{results.Results{Requests: results.Requests{Sent: 9, OK: 6, Errors: 2, Timeouts: 3, Retries: 4},
			Tokens:  results.Tokens{Prompt: 12632, Cached: 5161, Reasoning: 407, Content: 410},
			Harness: &results.Harness{Lag: results.LagSummary{N: 28}}},
			[]string{"9 sent: 6 ok, 2 errors, 3 timeouts, 0 cancelled, 0 in flight; 4 retries, 0 stalled",
				"prompt 12632 tokens (5161 cached), reasoning 407 tokens, content 410 tokens", "(simulated, over 28 waits)"}},
	} {
		var b bytes.Buffer
		PrintSummary(&b, &tc.r, "runs/x")
		for _, w := range tc.want {
			assert.Contains(t, b.String(), w)
		}
	}
}
