package diagnose

import (
	"time"

	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/workloads"
)

// Config is what the Analyzer needs to know about the run it watches. Durations are
// simulated time; a zero duration takes its default.
type Config struct {
	// Agents is the number of agents in the run; agents not yet seen in any event count as
	// starting (in their start jitter).
	Agents int
	// StallAfter is the silence after which a stream, a pacer wait or the whole run counts as
	// stalled, and the watchdog warns (default 120 s).
	StallAfter time.Duration
	// HangAfter is the time without progress after which the watchdog ends the run
	// (default 600 s).
	HangAfter time.Duration
	// SlowAfter is the mean end-to-end request latency from which a progressing run is
	// called slow (default 60 s).
	SlowAfter time.Duration
	// Rounds is the number of rounds each agent plans; 0 when unknown (then no round counts
	// as not started).
	Rounds int
	// Timeouts is the request timeout policy. A silent request ends by itself only when an
	// armed timeout can still end it: the whole-request and idle timeouts always can, the
	// TTFT timeout only before the first token.
	Timeouts workloads.Timeouts
	// PacerKind is the pacer design (slots, slots+rate, ticket, aimd…); PacerSlots its number
	// of permits where it has a fixed number (slots, slots+rate, ticket), 0 otherwise.
	PacerKind  pacer.Kind
	PacerSlots int
	// LeakOnTimeout is set when the pacer deliberately keeps the permit of a timed-out
	// request (the buggy release path).
	LeakOnTimeout bool
	// Proxy is set when the events come from a recording proxy watching a real harness
	// (agentsim record --watch): sessions are the agents, there is no pacer view, and the
	// verdicts say so (proxy.go).
	Proxy bool
}

// ConfigFrom derives the Analyzer's Config from a resolved workload.
func ConfigFrom(w *workloads.Workload) Config {
	t := w.Request.Timeouts
	return Config{
		Agents:        w.Agents,
		StallAfter:    w.Watchdog.StallAfter,
		HangAfter:     w.Watchdog.HangAfter,
		SlowAfter:     w.Watchdog.SlowAfter,
		Rounds:        w.Rounds,
		Timeouts:      t,
		PacerKind:     w.Pacer.Kind,
		PacerSlots:    w.Pacer.Slots,
		LeakOnTimeout: w.Pacer.LeakOnTimeout,
	}
}

// withDefaults returns c with every zero threshold set to the workload's default.
func (c Config) withDefaults() Config {
	if c.StallAfter <= 0 {
		c.StallAfter = workloads.DefaultStallAfter
	}
	if c.HangAfter <= 0 {
		c.HangAfter = workloads.DefaultHangAfter
	}
	if c.SlowAfter <= 0 {
		c.SlowAfter = workloads.DefaultSlowAfter
	}
	return c
}

// fixedLimit returns the pacer's number of permits when the design has a fixed one, else 0.
func (c Config) fixedLimit() int {
	if c.PacerKind.FixedLimit() {
		return c.PacerSlots
	}
	return 0
}
