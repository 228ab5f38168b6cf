package harness

import (
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/results"
)

// Target is the server a run talks to and how to reach it.
type Target struct {
	// URL is the server's base URL, http://host:port; requests go to URL/v1/….
	URL string
	// Kind says whether the server is agentsim's embedded simulator or an external one.
	Kind results.ServerKind
	// Profile and Faults name the embedded simulator's profile and active faults; empty for
	// an external server.
	Profile string
	Faults  []string
	// APIKey is sent as a bearer token when set; it is redacted in config.yaml and never
	// printed.
	APIKey string
	// MetricsURLs are the Prometheus /metrics URLs scraped every sample interval (empty:
	// URL/metrics). APIKey goes with the scrapes of those on URL's scheme, host and port only
	// (scrape.Scraper.Authorize).
	MetricsURLs []string
	// SimLag, when set, reads the embedded simulator's own lag (the engine of package
	// internal/engine is one): the run samples it, records it in results.json beside the
	// harness's lag, warns when it is large, and judges each request's silences net of that
	// request's own lag (docs/verdicts.md). nil for an external server.
	SimLag SimLag
}

// SimLag is what a run reads of the embedded simulator's own lag: how far, in simulated
// time, the simulator runs behind its model when its own work costs more wall time than the
// simulated time it stands for.
type SimLag interface {
	// Lag is how late, in simulated time, the simulator delivered tokens compared with when
	// its model generated them.
	Lag() *clock.Lag
	// Behind is how far behind its model the simulator is now, in simulated time.
	Behind() time.Duration
	// RequestLag is how far behind its model, in simulated time, the simulator is on the one
	// request the harness sent with id (events.jsonl's request): its latest delivery's
	// lateness or how far behind it is now, the larger; 0 while its model gives it no token.
	// ok is false when the simulator does not know the request (not yet read, long ended).
	RequestLag(id string) (lag time.Duration, ok bool)
	// NewLateness is the p99 of the lateness the simulator's deliveries gained since the
	// previous call, in simulated time, and starts a new window: for the --speedup max
	// controller (MaxPace) alone.
	NewLateness() time.Duration
}

// Server describes the target as results.json records it, credentials in the URL masked;
// what its gauges showed is the run's to fill in.
func (t Target) Server() results.Server {
	return results.Server{URL: redact.URL(t.URL), Kind: t.Kind, Profile: t.Profile, Fault: t.Faults}
}

// String describes the target in one line: its URL, or for the embedded simulator its profile
// and faults.
func (t Target) String() string { return t.Server().String() }

// metricsURLs returns the URLs to scrape: MetricsURLs, or the server's own /metrics.
func (t Target) metricsURLs() []string {
	if len(t.MetricsURLs) > 0 {
		return t.MetricsURLs
	}
	return []string{t.URL + "/metrics"}
}
