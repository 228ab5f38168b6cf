package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// TestLongRunNote checks the forecast a run prints as it starts: the default ocbrowse run at
// speedup 1 takes about half an hour (its runs last 25–45 min) and says so; at speedup 100,
// or for smoke, it is short and says nothing.
func TestLongRunNote(t *testing.T) {
	prof, err := simserver.LoadProfile(simserver.DefaultProfile)
	require.NoError(t, err)
	load := func(name string) *workloads.Workload {
		w, err := workloads.Load(workloads.LoadOptions{Workload: name})
		require.NoError(t, err)
		return w
	}
	oc := load("ocbrowse")
	s := estimateRun(oc, prof)
	assert.InDelta(t, 30*60, s, 10*60, "ocbrowse at speedup 1: %.0f s", s)
	assert.Contains(t, longRunNote(oc, prof, 1), "ocbrowse is 30 agents × 8 rounds: expect about ")
	assert.Contains(t, longRunNote(oc, prof, 1), "min of simulated and wall time alike (speedup 1), a rough estimate")
	assert.Empty(t, longRunNote(oc, prof, 100))
	assert.Empty(t, longRunNote(load("smoke"), prof, 20))
}
