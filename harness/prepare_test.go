package harness

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// TestRunCheckedAsksNothing checks that RunChecked settles the run from the Served it is
// given, without asking the server: the server lists one model, Served another, and the run
// sends the one Served lists.
func TestRunCheckedAsksNothing(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"listed/model"}, Tokens: 8}
	ts := f.Start(t)
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke", Overrides: []workloads.Override{{Key: "rounds", Value: "1", Source: "--set"}}})
	require.NoError(t, err)
	res, err := RunChecked(context.Background(), Options{Command: "run", Workload: w, Clock: clock.Real(),
		Dir: filepath.Join(t.TempDir(), "run"), HTTPClient: ts.Client(), Target: Target{URL: ts.URL, Kind: results.External},
		Served: &Served{Models: []ServedModel{{ID: "given/model"}}}})
	require.NoError(t, err)
	assert.Equal(t, "given/model", res.Server.Model, "the model of the Served given")
	assert.Equal(t, string(ModelFromServer), res.Server.ModelSource)
}
