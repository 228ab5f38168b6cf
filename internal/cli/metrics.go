package cli

import (
	"fmt"
	"net"

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
// on stderr where the metrics are. A malformed address is a usage error; one that cannot be
// listened on (in use, not local) a runtime failure.
func serveMetrics(c *cobra.Command, addr string) (*harness.MetricsEndpoint, error) {
	if addr == "" {
		return nil, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, usageError(fmt.Errorf("--metrics-addr %q: %w: want host:port, e.g. 127.0.0.1:9464", addr, err))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, runtimeError(fmt.Errorf("--metrics-addr %q: %w", addr, err))
	}
	ep := harness.ServeMetrics(ln)
	fmt.Fprintf(c.ErrOrStderr(), "agentsim: metrics at http://%s/metrics\n", ep.Addr())
	return ep, nil
}
