package traceimport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/trace"
)

// AccessLog imports a router access log: the SGLang router's and model gateway's request
// lines (tracing's text format, the router's "2026-11-29 19:45:16" timestamps or RFC 3339),
// in either latency form — Rust's Duration Debug string with its unit ("62.690782s") or a
// bare number (the gateway writes integer µs). Bare latencies are read in unit when it is
// not UnitUnknown; otherwise the unit is inferred from the log's own timestamps (see
// inferUnit) and its evidence is the first note.
//
// Each finish line ("finished processing request", "request failed with client error",
// "request failed with server error") of a POST becomes one request of its own session (an
// access log does not say which requests form a conversation): sent at the finish time minus
// the latency, with the status, and the latency as e2e_s. Token counts are unknown (0, with
// tokens_estimated). Note that the SGLang router's latency ends when the response head is
// written, which for a stream is about the first token, not the stream's end; the
// simulator's access log measures to the end.
func AccessLog(r io.Reader, name string, unit Unit) (*Trace, error) {
	starts, finishes, other, err := readAccessLog(r, name)
	if err != nil {
		return nil, err
	}
	t := &Trace{Header: trace.Header{Source: "access-log:" + name}}
	var bare []*logLine
	for _, f := range finishes {
		if f.hasLatency() && f.latUnit == UnitUnknown {
			bare = append(bare, f)
		}
	}
	switch {
	case len(bare) > 0 && unit != UnitUnknown:
		// A unit given is still checked against the log's clock: a log that shows another
		// one is refused, saying what it shows.
		if u, ev, err := inferUnit(starts, bare); err == nil && u != unit {
			return nil, fmt.Errorf("%s: %w: %s was given, but the log's own timestamps show %s: %s", name, ErrLatencyUnitDisproved, unit, u, strings.Join(ev, "; "))
		}
		t.Notes = append(t.Notes, fmt.Sprintf("latency unit: %s, as given by --latency-unit", unit))
	case len(bare) > 0:
		u, ev, err := inferUnit(starts, bare)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		unit = u
		t.Notes = append(t.Notes, ev...)
	case len(finishes) > 0 && finishes[0].hasLatency():
		t.Notes = append(t.Notes, fmt.Sprintf("latency unit: written in each value (line %d: latency=%s)", finishes[0].n, finishes[0].latRaw))
	}
	for _, f := range finishes {
		if f.hasLatency() && f.latUnit == UnitUnknown {
			f.latUnit = unit
		}
		if d := f.latUnit.in(f.lat); f.hasLatency() && d > trace.MaxSeconds {
			return nil, lineErr(name, f.n, "latency = %s is %s as %s: longer than any trace (at most %g s)", f.latRaw, formatSeconds(d), f.latUnit, trace.MaxSeconds)
		}
	}
	if t.Requests, err = accessRequests(name, finishes, starts); err != nil {
		return nil, err
	}
	t.finish()
	if other > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("skipped %s of other methods than POST (health checks, metrics, model lists)", plural.Of(other, "request line")))
	}
	if len(t.Requests) == 0 {
		return nil, fmt.Errorf("%s: no request lines: an access log has lines like %q", name,
			`2026-11-29 19:45:16 INFO smg::response: finished processing request method=POST uri=/v1/chat/completions status=200 latency=62690782`)
	}
	return t, nil
}

// readAccessLog reads the request lines of POSTs, and counts the finish lines of others.
func readAccessLog(r io.Reader, name string) (starts, finishes []*logLine, other int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), trace.MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		l, ok, err := parseLogLine(sc.Bytes(), n)
		if err != nil {
			return nil, nil, 0, &trace.LineError{Name: name, Line: n, Err: err}
		}
		if !ok {
			continue
		}
		if l.method != "" && l.method != "POST" {
			if !l.started {
				other++
			}
			continue
		}
		if l.started {
			starts = append(starts, &l)
		} else {
			finishes = append(finishes, &l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, 0, lineErr(name, n+1, "%v", err)
	}
	return starts, finishes, other, nil
}

// accessRequests turns finish lines into requests, one session each, sent at the finish time
// minus the latency (or at the paired start line's time when the line has no latency).
func accessRequests(name string, finishes, starts []*logLine) ([]trace.Request, error) {
	startByID := map[string]*logLine{}
	for _, s := range starts {
		if s.id != "" {
			startByID[s.id] = s
		}
	}
	// Seconds since the Unix epoch as floats: a log's times may be centuries apart, beyond
	// what time.Duration holds, and are refused below rather than wrapped.
	sent := make([]float64, len(finishes))
	origin := 0
	for i, f := range finishes {
		sent[i] = unixSeconds(f.at)
		switch {
		case f.hasLatency():
			sent[i] -= f.latUnit.in(f.lat)
		case f.id != "" && startByID[f.id] != nil:
			sent[i] = unixSeconds(startByID[f.id].at)
		}
		if sent[i] < sent[origin] {
			origin = i
		}
	}
	reqs := make([]trace.Request, len(finishes))
	used := map[string]bool{}
	for i, f := range finishes {
		ts := roundMicro(sent[i] - sent[origin])
		if ts > trace.MaxSeconds {
			return nil, lineErr(name, f.n, "sent %s after the earliest request (line %d): longer than any trace (at most %g s)", formatSeconds(ts), finishes[origin].n, trace.MaxSeconds)
		}
		session := f.id
		if session == "" || used[session] {
			session = fmt.Sprintf("line-%d", f.n)
		}
		used[session] = true
		if f.status != 0 && (f.status < 100 || f.status > 599) {
			return nil, lineErr(name, f.n, "status = %d: must be an HTTP status (100…599)", f.status)
		}
		r := trace.Request{Session: session, TS: ts, TokensEstimated: true, Status: f.status}
		if f.hasLatency() {
			r.E2ES = f.latUnit.in(f.lat)
		}
		reqs[i] = r
	}
	return reqs, nil
}

// unixSeconds returns t in seconds since the Unix epoch, to the microsecond.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond()/1000)/1e6
}

// roundMicro rounds seconds to the microsecond, the finest a log's timestamps give.
func roundMicro(s float64) float64 { return math.Round(s*1e6) / 1e6 }
