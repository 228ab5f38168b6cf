package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/fakeserver"
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
