package results

// SpeedupAchieved is how fast a --speedup max run went (docs/speed.md): the speedup its clock
// ran at over the run, as the controller set it to keep the harness's and the simulator's lag
// within LagBoundS.
type SpeedupAchieved struct {
	// Mode is "max".
	Mode string `json:"mode"`
	// LagBoundS is the lag the controller held the run within: 1 % of stall_after, in
	// simulated seconds.
	LagBoundS float64 `json:"lag_bound_s"`
	// Min, Median and Max summarise the speedup over the run's control windows, each an equal
	// share of wall time.
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	// Samples are the speedup from each change on: at simulated time TS (seconds since the
	// run's start), the clock ran Speedup times faster than wall time.
	Samples []SpeedupSample `json:"samples"`
}

// SpeedupSample is one change of a --speedup max run's speedup.
type SpeedupSample struct {
	TS      float64 `json:"t_s"`
	Speedup float64 `json:"speedup"`
}
