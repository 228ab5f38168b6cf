package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// TestServerClock checks that a command against an agentsim server adopts its speedup and
// says so, and runs in real time against any other server.
func TestServerClock(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   float64
		said   string
	}{
		{"50", 50, "running at speedup 50: this run adopts it"},
		{"", 1, ""},
	} {
		srv := (&fakeserver.Server{Speedup: tc.header}).Start(t)
		c := &cobra.Command{}
		c.SetContext(context.Background())
		var stderr bytes.Buffer
		c.SetErr(&stderr)
		clk, err := serverClock(c, srv.URL, "")
		srv.Close()
		require.NoError(t, err)
		assert.Equal(t, tc.want, clk.Speedup(), "header %q", tc.header)
		if tc.said == "" {
			assert.Empty(t, stderr.String())
		} else {
			assert.Contains(t, stderr.String(), tc.said)
		}
	}
}

// TestRunAdoptsTheServersSpeedup checks that agentsim run against an agentsim server at
// speedup 50 runs at its speedup, says so, and records it.
func TestRunAdoptsTheServersSpeedup(t *testing.T) {
	clk, err := clock.New(50)
	require.NoError(t, err)
	sim := simtest.NewLoopbackServer(t, simserver.Options{Clock: clk})
	defer sim.Close()
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "--server", sim.URL, "--out", dir}, quickSmoke...)
	code, out, stderr := execute(t, args...)
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, "is an agentsim server running at speedup 50: this run adopts it")
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, 50.0, res.Speedup, "results.json's speedup")
}
