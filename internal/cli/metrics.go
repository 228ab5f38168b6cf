package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentsim/agentsim/harness"
)

// addMetricsFlag adds --metrics-addr, where a command serves the harness's own Prometheus
// metrics while it runs (docs/files.md §6).
func addMetricsFlag(f *pflag.FlagSet) {
	f.String("metrics-addr", "", "serve the harness's own Prometheus metrics at http://ADDR/metrics while running, e.g. 127.0.0.1:9464 (port 0: any free port)")
}

// serveMetrics starts the metrics endpoint at addr, or returns nil when addr is empty. It says
// on stderr where the metrics are. An impossible address is a usage error; one in use a
// runtime failure (see listen).
func serveMetrics(c *cobra.Command, addr string) (*harness.MetricsEndpoint, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := listen("--metrics-addr", addr)
	if err != nil {
		return nil, err
	}
	ep := harness.ServeMetrics(ln)
	fmt.Fprintf(c.ErrOrStderr(), "agentsim: metrics at http://%s/metrics\n", ep.Addr())
	return ep, nil
}
