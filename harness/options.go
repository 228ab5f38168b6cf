// Package harness runs a workload: it starts the agents behind the pacer against a server,
// records events.jsonl, samples.jsonl, results.json and config.yaml, watches for hangs, and
// stops in two phases (duration ends new rounds; a grace period later, requests in flight are
// cancelled).
package harness

import (
	"io"
	"net/http"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Options configures one run.
type Options struct {
	// Command names the command in results.json ("run").
	Command string
	// Workload is the resolved, validated workload.
	Workload *workloads.Workload
	// Clock is the run's single source of time (speedup > 1 only with the embedded server).
	Clock *clock.Clock
	// Server describes the server; Server.URL is its base URL (http://host:port).
	Server results.Server
	// APIKey is sent as a bearer token when set; it is redacted in config.yaml.
	APIKey string
	// MetricsURLs are scraped every sample interval (default: the server's /metrics).
	MetricsURLs []string
	// Dir is the run directory; it is created if missing.
	Dir string
	// Out receives the live status line (when Live) and the summary.
	Out  io.Writer
	Live bool
	// HTTPClient carries the requests (nil: a client sized for the workload's agents).
	HTTPClient *http.Client
	// Reproduce, when set, is written to config.yaml's reproduce section (see
	// workloads.Recorded): how to make the run again, free of secrets.
	Reproduce any
}

// NewHTTPClient returns a client for conns concurrent requests: one idle connection each kept
// for reuse, no overall timeout (request timeouts are simulated time, enforced by the caller)
// and HTTP/1.1 as inference servers speak it.
func NewHTTPClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns + 16
	t.MaxIdleConnsPerHost = conns + 16
	t.ForceAttemptHTTP2 = false
	return &http.Client{Transport: t}
}
