package cli

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/redact"
)

// serverClock is the clock a command that runs no agents (record) runs on against the
// external server at url: the speedup an agentsim server advertises, said on stderr; real time
// for any other server. A command that runs agents adopts it as it prepares (target.prepare).
func serverClock(c *cobra.Command, url, apiKey string) (*clock.Clock, error) {
	speedup, found, err := harness.ServerSpeedup(c.Context(), http.DefaultClient, url, apiKey, harness.CheckTimeout)
	if err != nil {
		return nil, runtimeError(err)
	}
	if !found || speedup == 1 {
		return clock.Real(), nil
	}
	clk, err := clock.New(speedup)
	if err != nil {
		return nil, runtimeError(err)
	}
	sayAdopted(c, url, speedup)
	return clk, nil
}

// sayAdopted says on stderr that the command adopts the speedup of the agentsim server at url.
func sayAdopted(c *cobra.Command, url string, speedup float64) {
	fmt.Fprintf(c.ErrOrStderr(), "agentsim: %s is an agentsim server running at speedup %g: this run adopts it, so its simulated time passes %g× faster than wall time, as the server's does\n",
		redact.URL(url), speedup, speedup)
}
