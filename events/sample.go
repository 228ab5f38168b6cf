package events

// The canonical server gauges, the keys of Sample.Server (docs/files.md §2): every server's
// metric names are mapped onto these.
const (
	// DecodeRunning is the number of requests in the running decode batch.
	DecodeRunning = "decode_running"
	// PrefillInflight is the number of requests in prefill or waiting for their KV transfer.
	PrefillInflight = "prefill_inflight"
	// Queued is the number of requests waiting for admission.
	Queued = "queued"
	// KVUsage is the fraction (0–1) of the KV cache in use.
	KVUsage = "kv_usage"
	// GenTokS is the server's output rate, in tokens per second.
	GenTokS = "gen_tok_s"
)

// Gauges lists the canonical gauge names in report order.
var Gauges = []string{DecodeRunning, PrefillInflight, Queued, KVUsage, GenTokS}

// Sample is one line of samples.jsonl: the server's canonical gauges and the harness's own
// state at one sampling instant. TS is simulated seconds since the run started.
type Sample struct {
	TS   float64 `json:"t_s"`
	Wall string  `json:"wall"`
	// Server holds the canonical server gauges found (decode_running, prefill_inflight,
	// queued, kv_usage, gen_tok_s); absent when the server exposes none.
	Server       map[string]float64 `json:"server,omitempty"`
	ServerErrors []string           `json:"server_errors,omitempty"`
	// Agents counts agents per state (reading, pacer_wait, requesting, thinking, done…).
	Agents map[State]int `json:"agents,omitempty"`
	// InFlight is requests sent without a terminal event; OldestSilenceS is the longest time
	// any of them has gone without a byte.
	InFlight       int     `json:"in_flight"`
	OldestSilenceS float64 `json:"oldest_silence_s"`
	// TokensOut is the output tokens received so far (from completed requests' usage).
	TokensOut int64 `json:"tokens_out"`
	// ChunksIn is the stream chunks received so far, by every request; it moves whenever
	// any byte of output flows.
	ChunksIn int64        `json:"chunks_in"`
	Pacer    *PacerSample `json:"pacer,omitempty"`
	// LagS is the largest scheduling lag of the harness since the previous sample: how much
	// later than due, in simulated seconds, a wait it scheduled ended (see clock.Lag).
	// Absent when zero.
	LagS float64 `json:"lag_s,omitempty"`
	// Streams lists the open requests (sent, no terminal event yet).
	Streams []Stream `json:"streams,omitempty"`
}

// Stream is one open request at a sampling instant.
type Stream struct {
	Request string `json:"request"`
	Agent   int    `json:"agent"`
	// SentAgoS is the time since the request was sent; SinceLastByteS the time since its last
	// byte (headers or chunk), or since it was sent when nothing arrived yet.
	SentAgoS       float64 `json:"sent_ago_s"`
	SinceLastByteS float64 `json:"since_last_byte_s"`
	Chunks         int     `json:"chunks"`
	// Permit is the pacer permit the request's agent holds, 0 when none.
	Permit uint64 `json:"permit,omitempty"`
}

// PacerSample is the pacer's state at a sampling instant.
type PacerSample struct {
	InUse        int     `json:"in_use"`
	Waiting      int     `json:"waiting"`
	LongestWaitS float64 `json:"longest_wait_s"`
	Limit        int     `json:"limit,omitempty"`
	Acquired     int64   `json:"acquired"`
	Released     int64   `json:"released"`
	Leaked       int64   `json:"leaked"`
	// Granted is how many of the waiting agents have been granted a permit but not yet run to
	// take it; absent when none.
	Granted int `json:"granted,omitempty"`
	// Held lists the permits in use; Waiters the agents waiting for one.
	Held    []Holding `json:"held,omitempty"`
	Waiters []Waiter  `json:"waiters,omitempty"`
}

// Holding is one permit in use.
type Holding struct {
	Permit uint64  `json:"permit"`
	Agent  int     `json:"agent"`
	HeldS  float64 `json:"held_s"`
	// Leaked is set when the permit's request has ended but the permit was never released.
	Leaked bool `json:"leaked,omitempty"`
}

// Waiter is one agent waiting in the pacer.
type Waiter struct {
	Agent int     `json:"agent"`
	WaitS float64 `json:"wait_s"`
}
