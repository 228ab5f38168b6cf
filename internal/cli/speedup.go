package cli

import (
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/redact"
)

// serverClock is the clock a command that runs no agents (record) runs on against the
// external server at url: the speedup an agentsim server advertises, said on stderr; real time
// for any other server. A command that runs agents adopts it as it prepares (target.prepare).
func serverClock(c *cobra.Command, url, apiKey string) (*clock.Clock, error) {
	return serverClockWith(c, http.DefaultClient, url, apiKey)
}

// serverClockWith is serverClock asking through hc.
func serverClockWith(c *cobra.Command, hc *http.Client, url, apiKey string) (*clock.Clock, error) {
	speedup, found, err := harness.ServerSpeedup(c.Context(), hc, url, apiKey, harness.CheckTimeout)
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

// awaitPoll is how often awaitServerClock asks a server that does not answer yet, in wall time.
const awaitPoll = time.Second

// awaitServerClock is serverClock for a command that may start before the server at url
// listens (record --watch, started before serve): a clock chosen then would be wall time
// whatever the server's, so until the server answers at all (any status) it asks again every
// awaitPoll, through hc, having said once on stderr that it waits and why. The wait is on the
// real clock; ctx's end (Ctrl-C) ends it as an interrupt.
func awaitServerClock(c *cobra.Command, hc *http.Client, url, apiKey string) (*clock.Clock, error) {
	real := clock.Real()
	for said := false; ; said = true {
		_, err := harness.AskServer(c.Context(), hc, url, apiKey, harness.CheckTimeout)
		var unreachable *neturl.Error
		if !errors.As(err, &unreachable) {
			break // it answered, whatever it said: serverClockWith reads its speedup
		}
		if !said {
			fmt.Fprintf(c.ErrOrStderr(), "agentsim: %s does not answer yet (%s): waiting for it, to time the watch on its clock (an agentsim server's speedup), not on wall time; Ctrl-C to stop\n",
				redact.URL(url), redact.Text(unreachable.Err.Error()))
		}
		if real.Sleep(c.Context(), awaitPoll) != nil {
			return nil, &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted while waiting for %s to answer", redact.URL(url))}
		}
	}
	return serverClockWith(c, hc, url, apiKey)
}

// sayAdopted says on stderr that the command adopts the speedup of the agentsim server at url.
func sayAdopted(c *cobra.Command, url string, speedup float64) {
	fmt.Fprintf(c.ErrOrStderr(), "agentsim: %s is an agentsim server running at speedup %g: this run adopts it, so its simulated time passes %g× faster than wall time, as the server's does\n",
		redact.URL(url), speedup, speedup)
}
