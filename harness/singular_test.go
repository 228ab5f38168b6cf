package harness

import (
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// TestVerdictSummarySingular: a run of one round says "1 round completed, 1 request ok", as a
// person writes it, not "1 rounds".
func TestVerdictSummarySingular(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(1)
		require.NoError(t, err)
		sim := simtest.NewLocalServer(t, simserver.Options{Clock: clk})
		defer sim.Close()
		w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke", Overrides: []workloads.Override{
			{Key: "agents", Value: "1"}, {Key: "rounds", Value: "1"}}})
		require.NoError(t, err)
		res, err := Run(t.Context(), Options{Command: "run", Workload: w, Clock: clk, Dir: filepath.Join(t.TempDir(), "run"),
			HTTPClient: sim.Client(), Target: Target{URL: sim.URL, Kind: results.External}})
		require.NoError(t, err)
		assert.Regexp(t, `^1 round completed, 1 request ok, p50 latency `, res.Verdict.Summary)
	})
}
