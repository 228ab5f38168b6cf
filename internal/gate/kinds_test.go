package gate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/gate"
)

// TestVerdictKinds checks that a verdict rule may name every verdict diagnosis gives.
func TestVerdictKinds(t *testing.T) {
	assert.ElementsMatch(t, diagnose.Kinds, gate.VerdictKinds)
}
