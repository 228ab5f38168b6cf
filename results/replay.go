package results

// Replay is results.json's `replay` object (command "replay"): the replay beside the original
// its trace recorded. Times are simulated seconds; ratios are replay ÷ original, per request.
type Replay struct {
	// Trace is the trace file replayed; Mode is "sessions" or "timestamps"; TimeScale
	// multiplies the trace's times (0.5: twice as fast).
	Trace     string  `json:"trace"`
	Mode      string  `json:"mode"`
	TimeScale float64 `json:"time_scale"`
	// Sessions and Requests count what was replayed: the trace's sessions and requests in the
	// window and under --sessions.
	Sessions int `json:"sessions"`
	Requests int `json:"requests"`
	// Sent counts the replayed requests that were sent; Compared those that succeeded both
	// in the original (a 2xx status with e2e_s) and in the replay.
	Sent     int `json:"sent"`
	Compared int `json:"compared"`
	// SameTokens counts the compared requests whose output tokens, as the server counted
	// them, equal the recorded ones and whose prompt tokens are within the tolerance below of
	// the recorded ones.
	SameTokens int `json:"same_tokens"`
	// PromptToleranceShare and PromptToleranceTokens are that tolerance: a prompt counts as
	// the recorded one within the larger of this share of the recorded prompt and this many
	// tokens, either way.
	PromptToleranceShare  float64 `json:"prompt_tolerance_share"`
	PromptToleranceTokens int     `json:"prompt_tolerance_tokens"`
	// PromptDiff is the distribution of replay − recorded prompt tokens over the compared
	// requests, in tokens; omitted when none was compared.
	PromptDiff *Summary `json:"prompt_tokens_diff,omitempty"`
	// OutputForced counts the replayed requests that completed with a forced output length
	// (their recorded output_tokens, sent as max_tokens with ignore_eos); OutputMissed those
	// of them whose output, as the server counted it, is another length, and OutputDiff the
	// distribution of replay − recorded output tokens over those (omitted when none missed).
	OutputForced int      `json:"output_forced"`
	OutputMissed int      `json:"output_missed"`
	OutputDiff   *Summary `json:"output_tokens_diff,omitempty"`
	// E2E and TTFT are the distributions of the compared requests, original and replay;
	// E2ERatio and TTFTRatio the distributions of the per-request ratios. All four are
	// omitted when no request could be compared (the replay's own latencies are in
	// latency_seconds).
	E2E       *Sides   `json:"e2e_s,omitempty"`
	TTFT      *Sides   `json:"ttft_s,omitempty"`
	E2ERatio  *Summary `json:"e2e_ratio,omitempty"`
	TTFTRatio *Summary `json:"ttft_ratio,omitempty"`
	// Concurrency is the number of requests in flight over time (time-weighted mean and
	// maximum): the original's from its t_s and e2e_s, the replay's from its events.
	Concurrency ConcurrencySides `json:"concurrency"`
	// ScheduleLag (timestamps mode) is how late each request was sent after its scheduled
	// time, in simulated seconds.
	ScheduleLag *Summary `json:"schedule_lag_s,omitempty"`
	// Note says what could not be compared, e.g. a trace without outcomes.
	Note string `json:"note,omitempty"`
}

// Sides is one distribution of the original and of the replay.
type Sides struct {
	Original Summary `json:"original"`
	Replay   Summary `json:"replay"`
}

// ConcurrencySides is the concurrency over time of the original and of the replay.
type ConcurrencySides struct {
	Original Concurrency `json:"original"`
	Replay   Concurrency `json:"replay"`
}

// Concurrency is the number of requests in flight: its time-weighted mean over the span from
// the first send to the last end, and its maximum.
type Concurrency struct {
	Mean float64 `json:"mean"`
	Max  int     `json:"max"`
}
