package results

// Harness describes the harness itself rather than the server: how late its own waits ran.
type Harness struct {
	// Lag is the harness's scheduling lag: for every think time, tool time, retry backoff,
	// timeout and sample tick it scheduled, how much later than due it ran, in simulated
	// seconds.
	Lag LagSummary `json:"lag_seconds"`
	// Warning is set when the lag was large enough to distort the run's figures; it says by
	// how much and which speedup would keep the lag small.
	Warning string `json:"warning,omitempty"`
	// SimulatorLag is the embedded simulator's own lag: for every delivery of tokens, how
	// much later than its model said they were generated the simulator delivered them, in
	// simulated seconds. Absent against an external server.
	SimulatorLag *LagSummary `json:"simulator_lag_seconds,omitempty"`
	// SimulatorWarning is set when the simulator's lag was large enough to distort the run's
	// figures, as Warning is for the harness's.
	SimulatorWarning string `json:"simulator_warning,omitempty"`
}

// LagSummary is a scheduling-lag distribution in simulated seconds: the median, the 99th
// percentile (both within 12.5 % above the true value) and the maximum, over N waits.
type LagSummary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
	N   int64   `json:"n"`
}
