package cli

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/redact"
)

// serverClock is the clock a command runs on against the external server at url: the speedup
// an agentsim server advertises, said on stderr, so that the harness's timeouts, think and
// tool times and watchdog run on the server's clock; real time for any other server.
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
	fmt.Fprintf(c.ErrOrStderr(), "agentsim: %s is an agentsim server running at speedup %g: this run adopts it, so its simulated time passes %g× faster than wall time, as the server's does\n",
		redact.URL(url), speedup, speedup)
	return clk, nil
}
