package gate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/results"
)

// TestVerdictKinds checks that a verdict rule may name every verdict diagnosis gives.
func TestVerdictKinds(t *testing.T) {
	kinds := make([]any, len(results.VerdictKinds))
	for i, k := range results.VerdictKinds {
		kinds[i] = string(k)
	}
	th, err := gate.Parse(map[string]any{gate.VerdictFigure: kinds})
	require.NoError(t, err, "Parse(verdict: %v)", kinds)
	rules := th.Rules()
	require.Len(t, rules, 1)
	assert.ElementsMatch(t, results.VerdictKinds, rules[0].Allowed)
}
