package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTuneGC checks that a command that runs agents sets the collector's target, and leaves
// it alone when the environment sets GOGC.
func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	tuneGC([]string{"HOME=/root", "GOGC=200"})
	assert.Equal(t, 100, debug.SetGCPercent(100), "GOGC in the environment wins")

	tuneGC([]string{"HOME=/root"})
	assert.Equal(t, gcPercent, debug.SetGCPercent(100))
}
