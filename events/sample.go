package events

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

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
	// InFlightUnrecorded is how many of the agents' requests were being opened or closed while
	// the sample was taken — their request_sent or terminal event not yet recorded: the most
	// by which InFlight may differ from the requests in flight by the events up to the
	// sample. Absent when none.
	InFlightUnrecorded int64 `json:"in_flight_unrecorded,omitempty"`
	// TokensOut is the output tokens received so far (from completed requests' usage).
	TokensOut int64 `json:"tokens_out"`
	// ChunksIn is the stream chunks received so far, by every request; it moves whenever
	// any byte of output flows.
	ChunksIn int64 `json:"chunks_in"`
	// RoundsEnded is the rounds that have ended so far, completed or failed (not those
	// cancelled before their request): what the live line counts against the rounds planned.
	// Absent when none has, and in older files.
	RoundsEnded int          `json:"rounds_ended,omitempty"`
	Pacer       *PacerSample `json:"pacer,omitempty"`
	// LateS is how much later than due this sample was taken, in simulated seconds: the time
	// since the previous sample (or the run's start) beyond one sample interval. Absent when
	// under a millisecond.
	LateS float64 `json:"late_s,omitempty"`
	// LagS is the largest scheduling lag of the harness since the previous sample: how much
	// later than due, in simulated seconds, a wait it scheduled ended (see clock.Lag).
	// Absent when zero.
	LagS float64 `json:"lag_s,omitempty"`
	// SimLagS is the embedded simulator's own lag at this sample: how much later than its
	// model, in simulated seconds, it delivered tokens since the previous sample, or how far
	// behind its model it is now, the larger (see internal/engine's Engine.Lag and Behind).
	// Absent when zero, and against an external server.
	SimLagS float64 `json:"sim_lag_s,omitempty"`
	// SimLagPerRequest is set when the embedded simulator measures each request's own lag:
	// Streams[].SimLagS, and the sim_lag_s of each request's byte and terminal events, then
	// hold it, absent meaning 0. A silence is credited with its own request's lag only
	// (docs/verdicts.md). Absent in older files and against an external server.
	SimLagPerRequest bool `json:"sim_lag_per_request,omitempty"`
	// Open summarises every open request; absent in files that list every open stream.
	Open *OpenStreams `json:"open,omitempty"`
	// Streams lists open requests (sent, no terminal event yet), longest silence first: the
	// ListedStreams longest silences, extended to every stream silent ≥ stall_after up to
	// MaxListedStreams. When Open is absent (older files, recordings) it lists every open
	// request. Streams are listed in full when InFlight = len(Streams).
	Streams []Stream `json:"streams,omitempty"`
}

// How many streams, waiters and holders a sample names: the longest silences and waits, the
// evidence a diagnosis quotes; the counts are in the aggregates.
const (
	// ListedStreams is how many of the longest silences a sample always names.
	ListedStreams = 8
	// MaxListedStreams bounds the streams named when more are silent ≥ stall_after.
	MaxListedStreams = 64
	// ListedWaiters is how many of the longest pacer waits a sample names.
	ListedWaiters = 8
	// MaxListedHeld bounds the permits named in Pacer.Held: every leaked one first, then the
	// longest held.
	MaxListedHeld = 64
)

// NamedStreams returns how many of open streams, silent of them silent ≥ stall_after, a
// sample names: ListedStreams, or every silent one up to MaxListedStreams, at most all.
func NamedStreams(open, silent int) int {
	return min(open, max(ListedStreams, min(silent, MaxListedStreams)))
}

// OpenStreams summarises every open request at a sampling instant. Times are simulated
// seconds.
type OpenStreams struct {
	// StallAfterS is the watchdog's stall_after, the threshold of Silent.
	StallAfterS float64 `json:"stall_after_s"`
	// Silent counts the streams with no byte for ≥ StallAfterS; Moving those that received a
	// chunk in the last second (MovingWithinS); WithBytes those that received any byte.
	Silent    int `json:"silent"`
	Moving    int `json:"moving"`
	WithBytes int `json:"with_bytes"`
	// Chunks is the stream chunks the open requests have received.
	Chunks int64 `json:"chunks"`
	// LastByteAgoS is the time since the latest byte on any open stream; 0 when WithBytes is 0.
	LastByteAgoS float64 `json:"last_byte_ago_s"`
	// SilenceP50S and SilenceP90S are quantiles of the open streams' silences (the maximum
	// is Sample.OldestSilenceS).
	SilenceP50S float64 `json:"silence_p50_s"`
	SilenceP90S float64 `json:"silence_p90_s"`
	// UnlistedMaxSilenceS is the longest silence among the open streams Sample.Streams does
	// not name: each of them received a byte at most that long ago. 0 when every stream is named.
	UnlistedMaxSilenceS float64 `json:"unlisted_max_silence_s,omitempty"`
	// NotSilentMaxS is the longest silence shorter than StallAfterS: the streams not silent
	// received a byte at most that long ago.
	NotSilentMaxS float64 `json:"not_silent_max_s"`
	// UnlistedSilentSimLagS is the smallest own lag in the embedded simulator (Stream.SimLagS)
	// among the streams silent ≥ StallAfterS that Sample.Streams does not name: each of them
	// is at least that far behind the simulator's model. Only with Sample.SimLagPerRequest;
	// absent when 0 or when every silent stream is named.
	UnlistedSilentSimLagS float64 `json:"unlisted_silent_sim_lag_s,omitempty"`
}

// MovingWithinS is how recent, in simulated seconds, a stream's last chunk must be for
// OpenStreams.Moving to count it.
const MovingWithinS = 1.0

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
	// SimLagS is the request's own lag in the embedded simulator, in simulated seconds: how
	// late its latest delivery was against the simulator's model, or how far behind its model
	// it is at the sample, the larger; 0 while the model gives it no token (a wedged request).
	// Only with Sample.SimLagPerRequest; absent when 0.
	SimLagS float64 `json:"sim_lag_s,omitempty"`
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
	// Unrecorded is how many of the agents' pacer operations, not waiting, were under way
	// while the sample was taken — begun, their events not yet recorded: the most by which
	// InUse may differ from the permits the events up to the sample show held. Absent when
	// none.
	Unrecorded int64 `json:"unrecorded,omitempty"`
	// HeldSilent counts the permits in use whose request has been silent ≥ stall_after;
	// HeldLeaked those leaked (see Holding.Leaked). The others are held by work still moving.
	HeldSilent int `json:"held_silent,omitempty"`
	HeldLeaked int `json:"held_leaked,omitempty"`
	// WaitP50S and WaitP90S are quantiles of the waiting agents' waits, in seconds (the
	// maximum is LongestWaitS); absent when nobody waits.
	WaitP50S float64 `json:"wait_p50_s,omitempty"`
	WaitP90S float64 `json:"wait_p90_s,omitempty"`
	// Held lists permits in use: all of them up to MaxListedHeld, else the leaked ones and
	// the longest held. Waiters lists the ListedWaiters agents that have waited longest
	// (every waiting agent in files without OpenStreams).
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

// SilentStreams returns how many open streams had received no byte for ≥ stallAfterS
// seconds at the sample: Open's count when it was taken with that threshold, else the count
// among the streams listed.
func (s *Sample) SilentStreams(stallAfterS float64) int {
	if s.Open != nil && s.Open.StallAfterS == stallAfterS {
		return s.Open.Silent
	}
	n := 0
	for _, st := range s.Streams {
		if stallAfterS > 0 && st.SinceLastByteS >= stallAfterS {
			n++
		}
	}
	return n
}

// OpenChunks returns the stream chunks the open requests had received at the sample.
func (s *Sample) OpenChunks() int64 {
	if s.Open != nil {
		return s.Open.Chunks
	}
	n := int64(0)
	for _, st := range s.Streams {
		n += int64(st.Chunks)
	}
	return n
}

// Bound turns a sample that lists every open stream into the bounded form: it counts them in
// Open, with stallAfterS the threshold of a silent stream, and keeps in Streams only the
// longest silences (see Streams). A sample that has Open already is left as it is.
func (s *Sample) Bound(stallAfterS float64) {
	if s.Open != nil {
		return
	}
	o := &OpenStreams{StallAfterS: stallAfterS}
	silences := make([]float64, 0, len(s.Streams))
	last := -1.0
	for _, st := range s.Streams {
		o.Chunks += int64(st.Chunks)
		if st.SinceLastByteS >= stallAfterS {
			o.Silent++
		}
		if st.Chunks > 0 && st.SinceLastByteS < MovingWithinS {
			o.Moving++
		}
		if st.SinceLastByteS < st.SentAgoS {
			o.WithBytes++
			if last < 0 || st.SinceLastByteS < last {
				last = st.SinceLastByteS
			}
		}
		silences = append(silences, st.SinceLastByteS)
	}
	o.LastByteAgoS = max(last, 0)
	s.Open = o
	n := len(s.Streams)
	if n == 0 {
		return
	}
	listed := NamedStreams(n, o.Silent)
	order := func(x, y Stream) int {
		return cmp.Or(cmp.Compare(y.SinceLastByteS, x.SinceLastByteS), x.Agent-y.Agent, strings.Compare(x.Request, y.Request))
	}
	named := first(s.Streams, listed, order)
	if s.SimLagPerRequest && listed < n {
		// The least lag of the silent streams the sample does not name: a silence among
		// them that lag could explain is credited as the named ones are.
		least := math.Inf(1)
		for _, st := range s.Streams {
			if st.SinceLastByteS >= stallAfterS && (listed == 0 || order(st, named[listed-1]) > 0) {
				least = min(least, st.SimLagS)
			}
		}
		if !math.IsInf(least, 1) {
			o.UnlistedSilentSimLagS = least
		}
	}
	s.Streams = named
	slices.Sort(silences)
	slices.Reverse(silences)
	q := func(p float64) float64 { return silences[n-max(int(math.Ceil(p*float64(n))), 1)] }
	o.SilenceP50S, o.SilenceP90S = q(0.5), q(0.9)
	if listed < n {
		o.UnlistedMaxSilenceS = silences[listed]
	}
	if o.Silent < n {
		o.NotSilentMaxS = silences[o.Silent]
	}
}

// first returns the k first of xs in order, sorted: a selection, since a sample of thousands
// of open streams names at most MaxListedStreams, and a proxy's watch at a high speedup
// bounds a thousand samples a second. xs is reordered when k covers it.
func first(xs []Stream, k int, order func(x, y Stream) int) []Stream {
	if k >= len(xs) {
		slices.SortFunc(xs, order)
		return xs
	}
	top := make([]Stream, 0, k)
	for _, x := range xs {
		if len(top) == k && order(x, top[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, x, order)
		if len(top) < k {
			top = append(top, Stream{})
		}
		copy(top[i+1:], top[i:len(top)-1])
		top[i] = x
	}
	return top
}
